// Package e2e tests yagent end to end: `bin/yagent serve` started as a
// process, real plugin processes behind it, an MCP client in front.
package e2e
