// Package tools defines the shell plugin's five tools (run_bash,
// shell_wait, write_stdin, shell_cancel, shell_tasks) over a
// runner.Manager: one tool per file, its description embedded from the .md
// beside it, its input a typed struct whose schema the sdk infers.
package tools
