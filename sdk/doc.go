// Package sdk is what a yagent tool plugin imports: the Spec that describes a
// tool to the host, the Tool interface, a typed tool helper whose JSON Schema
// is inferred from its input struct, and Serve, the one call a plugin's main
// makes.
//
// Proto types never appear in this package's signatures; the gRPC adapter
// lives in files of its own.
package sdk
