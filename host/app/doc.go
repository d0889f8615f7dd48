// Package app assembles a running host from its parts: the resolved profile,
// the plugin manager, the guard and approver, the dispatcher and the
// surface. It is the Go API for embedding yagent, and what the CLI and the
// MCP front are built on.
package app
