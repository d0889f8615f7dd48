// Command yagent serves yagent's tool surface over MCP (`yagent serve`) and
// drives it from the command line: list the tools, call one, manage plugins
// and their pins, start a new plugin (`yagent plugins init`), show profiles.
package main
