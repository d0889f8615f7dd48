// Package pluginmgr finds, verifies, launches and supervises the host's
// tool plugins: discovery of yagent-plugin-<name> binaries in the plugin
// folders, a spec cache keyed by each binary's sha256 (so a warm start
// launches nothing until a tool is called), optional pinning by checksum,
// go-plugin launches over gRPC with the host's callback service on the
// broker and the calls on a call channel (remote.CallChannel), and crash
// handling: plugin_crashed for the call in flight, the
// plugin's reported process groups killed, a fresh process on the next call.
//
// Trust: a binary a command could have written (Options.Writable: it lies
// in a folder commands can write, or a link on its way does) is launched,
// or described from the spec cache, only when something vouches for it: a
// pin of the user's lock file or the admin's managed lock that it matches,
// or the sum the host was built with for its name (Options.Built, from
// BuiltSums: make build links the host with its plugins' sums). Otherwise
// it is refused with an *UntrustedError that says why and names `yagent
// plugins pin`. A folder no command can write is trusted as it is, pinned
// or not; the dev override folder is never judged.
package pluginmgr
