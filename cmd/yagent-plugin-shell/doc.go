// Command yagent-plugin-shell is yagent's shell plugin: run_bash,
// shell_wait, write_stdin, shell_cancel and shell_tasks, served to the host
// over go-plugin. The logic lives under plugins/shell: the runner
// (processes and their ownership), output (capped, sanitized output) and
// tools (the tool definitions) packages; see plugins/shell/README.md for
// who owns which process.
package main
