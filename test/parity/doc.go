// Package parity holds tests that hold two sides of the wire to one
// answer: the guard's judgment of a command line (call/guard) and what
// the plugin that runs it does with it (plugins/shell/runner).
package parity
