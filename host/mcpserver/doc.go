// Package mcpserver serves the host's surface to MCP clients with the
// official Go SDK: tools are registered with raw handlers (the adapter, not
// the SDK, validates input), a receiving middleware lists tools per session
// and tier and answers calls to unknown names with "did you mean", progress
// events become progress notifications and images become image content.
package mcpserver
