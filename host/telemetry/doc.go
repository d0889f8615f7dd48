// Package telemetry traces and measures the host's tool calls with
// OpenTelemetry: a span per call (the plugin's spans as its children across
// the gRPC boundary) and metrics for calls, latency, asks, denies and
// plugin restarts and crashes. It is off unless the standard OTEL_*
// variables configure an exporter.
package telemetry
