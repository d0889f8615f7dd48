// Package plugintest runs a yagent plugin in-process over real gRPC, for
// plugin authors' tests: the same Describe and Call protocol, the same
// go-plugin broker for the plugin's callbacks, and a test Host that records
// progress and process groups and answers approval requests.
package plugintest
