// Package tools is the cognitive family's tools — think, update_plan,
// todo_write, todo_read and use_skill — the tools an agent uses to reason,
// keep a plan and a todo list per session, and load skills. Plugin builds
// them from the plugin's settings; yagent-plugin-cognitive serves them.
//
// Settings (the profile's plugins.cognitive section, read with sdk.Settings):
//
//   - skill_dirs: folders holding skills, separated by os.PathListSeparator;
//     each skill is a folder with a SKILL.md whose YAML front matter gives
//     its name and description;
//   - state_dir: where per-session state is kept as JSON
//     (<state_dir>/sessions/<session>/cognitive.json); when unset,
//     $YAGENT_STATE_DIR; when that is unset too, state lives in memory only.
package tools
