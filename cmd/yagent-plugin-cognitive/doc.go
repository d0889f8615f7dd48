// Command yagent-plugin-cognitive serves the cognitive family: think,
// update_plan, todo_write, todo_read and use_skill. The tools live in
// plugins/cognitive/tools; this binary is one sdk.Serve call.
package main
