// Package soak drives one `bin/yagent serve` process with ten thousand mixed
// tool calls over MCP and checks that the host and its plugins do not grow:
// threads, open file descriptors and resident memory, sampled from /proc.
// It runs only with YAGENT_SOAK=1 (make soak); YAGENT_SOAK_OUT names a file
// for its Markdown table, and YAGENT_SOAK_CONFIG a user config.yaml for the
// served host (an exec rule there puts every command under the exec
// supervisor); YAGENT_SOAK_FRONT=http serves the mix over `serve --http`,
// one session per worker, ended (DELETE) and replaced every 50 calls, and
// the ended sessions must leave no saved state.
package soak
