// Command yagent-plugin-probe is a plugin for yagent's end-to-end tests: it
// reports its PID, blocks until cancelled, and measures how many of its calls
// are in flight at once.
package main
