// Package pluginpb holds the generated Go code of plugin.proto, the wire
// protocol between the yagent host and its tool plugins.
package pluginpb

//go:generate ../../scripts/proto.sh
