// Package mcpserver serves the host's surface to MCP clients with the
// official Go SDK: tools are registered with raw handlers (the adapter, not
// the SDK, validates input), a receiving middleware lists tools per session
// and tier and answers calls to unknown names with "did you mean", progress
// events become progress notifications and images become image content.
//
// StdioTransport is the front on stdin/stdout. It reads the lines itself
// and answers a bad one (not JSON, not a JSON-RPC message, a batch, over
// DefaultMaxFrame bytes, nested over MaxDepth, not UTF-8) with a JSON-RPC
// error, so that one bad frame never ends the session as the SDK's own
// stdio transport would.
package mcpserver
