// Package mcpserver serves the host's surface to MCP clients with the
// official Go SDK: tools are registered with raw handlers (the adapter, not
// the SDK, validates input), a receiving middleware lists tools per session
// and tier and answers calls to unknown names with "did you mean", and images
// become image content. The server taps the host's bus: a call's progress
// becomes progress notifications to the client that sent a progress token,
// log records become notifications/message at the level the client set.
// A call whose _meta holds a W3C traceparent (SEP-414) runs under the
// client's span, which the host's span of the call becomes a child of.
// When a session ends, OnSessionEnd tells the plugins to release what they
// held for it. A finished call's result is handed to the SDK as a plain
// struct of the same wire form (encodeOnce), which encoding/json writes in
// one pass: the SDK's own types encode themselves inside one another, and
// each outer pass scanned the text of the inner ones again.
//
// StdioTransport is the front on stdin/stdout. It reads the lines itself
// and answers a bad one (not JSON, not a JSON-RPC message, a batch, over
// DefaultMaxFrame bytes, nested over MaxDepth, not UTF-8) with a JSON-RPC
// error, so that one bad frame never ends the session as the SDK's own
// stdio transport would. It writes a response around the result the SDK
// encoded as it is, where EncodeMessage would compact it once more.
//
// HTTPFront is the front for `serve --http`: the SDK's Streamable HTTP
// handler at /mcp behind an Origin check, a bearer token and a body cap,
// with /healthz and /readyz beside it. It ends a session's calls in flight
// when the session ends (DELETE or idle), which the SDK's Close alone does
// not: it waits for them.
package mcpserver
