// Command floor is the floor that bench/mcp measures yagent against: one
// process serving one tool, read_file, over stdio through the MCP Go SDK,
// with no plugin, guard, authorization or schema repair in between. It
// answers the way yagent's read_file does (the file's lines as they are,
// and the same structured data), so that both move the same bytes.
//
//	floor -root DIR
package main
