// Command yagent-plugin-hello is an example of a custom yagent plugin, written
// the way a team shipping its own tools would write one: a main that is one
// sdk.Serve call, and one tool per file.
package main
