// Package remote is the host's half of the wire to a tool plugin: the
// go-plugin plugin set the host launches a plugin with (PluginSet), the
// Client it dispenses (Dispense) to describe the plugin, call its tools
// and end its sessions, the host's side of the plugin's callbacks, the
// call channel the host hands a plugin as an inherited socket
// (CallChannel), the mutual TLS of the gRPC connection (ChannelTLS), the
// span sink a traced call hands the plugin's spans to (WithSpanSink), and
// the conversions of the host's direction between the sdk's types and the
// wire messages.
//
// host/pluginmgr launches plugins with it and sdk/plugintest connects to a
// plugin served in the test's process with it. It is internal to this
// module, so it is no part of a plugin author's API: the plugin's side is
// the sdk, and what both sides share is internal/wire.
package remote
