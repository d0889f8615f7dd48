// Package proctest reads the process table from /proc for the tests that
// count their own processes: which children a process has, and whether a
// process is still alive, and how often its own threads were switched out;
// and, for the tests that start `yagent serve --http`, the URL its start
// line names.
package proctest
