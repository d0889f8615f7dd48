// Command listing measures the context a model pays for the tool surface:
// for every built-in profile, the bytes of the up-front MCP listing (as
// shipped and with deferred tools on), the bytes of each tool, and the cost
// of loading one Cold tool with load_tool. It opens the host through the Go
// API with the built plugins and serves it with the real MCP front over an
// in-memory transport, counting the bytes of each result exactly as the
// front encodes them. It prints a Markdown section for BENCHMARKS.md.
//
//	go run ./bench/listing [-plugins bin/plugins]
package main
