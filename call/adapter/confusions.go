package adapter

// confusions are the field names models carry over from other tools'
// schemas (docs/ARCHITECTURE.md#mechanisms §3.2), each with the names it may
// stand for here, in order: an unknown field named so is answered with the
// first of them the schema has at that place, before any spelling guess.
var confusions = map[string][]string{
	// Paths, as other file tools name them.
	"file_path": {"path"}, "filepath": {"path"}, "filename": {"path"}, "file": {"path"},
	"absolute_path": {"path"}, "target_file": {"path"}, "dir": {"path"}, "directory": {"path"},
	// Edits: Claude Code's old_str/new_str, server-filesystem's oldText/newText.
	"old_str": {"old_string"}, "oldText": {"old_string"}, "old_text": {"old_string"}, "search": {"old_string", "pattern"},
	"new_str": {"new_string"}, "newText": {"new_string"}, "new_text": {"new_string"}, "replace": {"new_string"},
	"replacement": {"new_string"}, "replaceAll": {"replace_all"},
	// Commands.
	"cmd": {"command"}, "script": {"command"}, "bash": {"command"}, "shell_command": {"command"},
	"timeout": {"timeout_ms"}, "run_in_background": {"is_background"},
	// Searches: ripgrep's and other harnesses' filters.
	"include": {"glob", "pattern"}, "includes": {"glob", "pattern"}, "file_pattern": {"glob", "pattern"},
	"query": {"pattern"}, "regex": {"pattern"}, "case_insensitive": {"ignore_case"}, "-i": {"ignore_case"},
}

// confusion returns the field that name, unknown here, most likely means
// among valid, or "".
func confusion(name string, valid []string) string {
	for _, want := range confusions[name] {
		for _, v := range valid {
			if v == want {
				return want
			}
		}
	}
	return ""
}
