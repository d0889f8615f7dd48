// Package app assembles a running host from its parts: the resolved profile,
// the plugin manager, the guard and approver, the dispatcher and the
// surface. It is the Go API for embedding yagent, and what the CLI is built
// on. It serves no MCP itself: yagent serve hands the App's Surface and
// Instructions to the MCP front (host/mcpserver), which does not import app.
// It owns the sessions' temp folders (package sessiontmp, temp.go): made on
// a session's first call, removed by EndSession (or once the session's last
// background command ends), by Close, or by a later start's sweep.
package app
