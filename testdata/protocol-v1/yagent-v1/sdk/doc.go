// Package sdk is what a yagent tool plugin imports: the Spec that describes a
// tool to the host, the Tool interface, a typed tool helper whose JSON Schema
// is inferred from its input struct, and Serve, the one call a plugin's main
// makes.
//
// The host resolves every role argument once and sends the value it judged:
// a path_read or path_write argument arrives absolute, with "~" expanded,
// ".." and symlinks resolved; a url argument arrives with its scheme. Use
// these values as they are (PathArg documents the guarantee), never trimmed
// or joined with the process's working folder: a plugin process runs in a
// private empty folder of its own, so a relative open fails loudly. A path
// under a temp folder the session's own stands for (CallInfo.Temp) arrives
// as the file in that folder, what the session's commands see there
// (TempFolder.Map is the one mapping, used on both sides).
//
// Tracing needs nothing of a plugin: when the host traces calls, a tool's
// ctx carries the call's span, and spans a tool starts with the
// OpenTelemetry trace API (otel.Tracer(...).Start(ctx, ...)) are handed to
// the host with the call's result (see TelemetryEnv).
//
// Proto types never appear in this package's signatures; the gRPC adapter
// lives in files of its own. The package is the plugin's side of the wire
// only: the host's half is internal/remote, and what both sides share is
// internal/wire, neither of which a plugin author imports.
package sdk
