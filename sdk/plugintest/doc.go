// Package plugintest runs a yagent plugin in-process over real gRPC, for
// plugin authors' tests: the same Describe and Call protocol, the same
// go-plugin broker for the plugin's callbacks, and a test Host that records
// progress and process groups and answers approval requests.
//
// It takes the plugin's specs in as the host does at load
// (call/toolspec.Admit), and runs every call past the host's own guard
// (call/guard) first, so a test sees the skips, asks, refusals and resolved
// arguments the plugin's users will.
package plugintest
