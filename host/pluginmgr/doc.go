// Package pluginmgr finds, verifies, launches and supervises the host's
// tool plugins: discovery of yagent-plugin-<name> binaries in the plugin
// folders, a spec cache keyed by each binary's sha256 (so a warm start
// launches nothing until a tool is called), optional pinning by checksum,
// go-plugin launches over gRPC with the host's callback service on the
// broker and the calls on a call channel (sdk.CallChannel), and crash
// handling: plugin_crashed for the call in flight, the
// plugin's reported process groups killed, a fresh process on the next call.
package pluginmgr
