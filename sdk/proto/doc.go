// Package pluginpb holds the generated Go code of plugin.proto, the wire
// protocol between the yagent host and its tool plugins.
package pluginpb

//go:generate protoc --go_out=paths=source_relative:. --go-grpc_out=paths=source_relative:. plugin.proto
