// Package parity holds tests that hold two sides of the wire to one
// answer: the guard's judgment of a command line (call/guard) and what
// the plugin that runs it does with it (plugins/shell/runner); and the
// network table's answer for a host named by web_fetch or the browser (the
// guard) and for a command's connection to it (the session's proxy).
package parity
