// Package session holds the state of one agent session: one MCP connection
// (over stdio, the process) or one CLI invocation. It carries the session's
// id, the Cold tools it has loaded, its passes (tools the user approved for
// the rest of the session) and the Answerer that asks its user.
//
// A Session is safe for concurrent use: calls of one session may run in
// parallel.
package session
