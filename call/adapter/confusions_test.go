package adapter

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/session"
)

// TestConfusions_NamedInTheAnswer: each field name models bring from other
// tools gets, on a tool whose schema has the field it stands for, an answer
// naming that field. Every entry of the table has a case here.
func TestConfusions_NamedInTheAnswer(t *testing.T) {
	t.Parallel()
	// The fields of the tools each confusion is met on.
	fields := map[string][]string{
		"read_file":              {"path", "offset", "limit"},
		"search_replace_in_file": {"path", "old_string", "new_string", "replace_all"},
		"run_bash":               {"command", "is_background", "timeout_ms"},
		"grep":                   {"pattern", "path", "glob", "ignore_case"},
		"search_files":           {"pattern", "path", "max_results"},
	}
	cases := []struct{ wrong, tool, want string }{
		{"file_path", "read_file", "path"}, {"filepath", "read_file", "path"}, {"filename", "read_file", "path"},
		{"file", "read_file", "path"}, {"absolute_path", "read_file", "path"}, {"target_file", "read_file", "path"},
		{"dir", "search_files", "path"}, {"directory", "search_files", "path"},
		{"old_str", "search_replace_in_file", "old_string"}, {"oldText", "search_replace_in_file", "old_string"},
		{"old_text", "search_replace_in_file", "old_string"}, {"search", "search_replace_in_file", "old_string"},
		{"search", "grep", "pattern"},
		{"new_str", "search_replace_in_file", "new_string"}, {"newText", "search_replace_in_file", "new_string"},
		{"new_text", "search_replace_in_file", "new_string"}, {"replace", "search_replace_in_file", "new_string"},
		{"replacement", "search_replace_in_file", "new_string"}, {"replaceAll", "search_replace_in_file", "replace_all"},
		{"cmd", "run_bash", "command"}, {"script", "run_bash", "command"}, {"bash", "run_bash", "command"},
		{"shell_command", "run_bash", "command"}, {"timeout", "run_bash", "timeout_ms"},
		{"run_in_background", "run_bash", "is_background"},
		{"include", "grep", "glob"}, {"include", "search_files", "pattern"}, {"includes", "grep", "glob"},
		{"file_pattern", "search_files", "pattern"}, {"query", "grep", "pattern"}, {"regex", "grep", "pattern"},
		{"case_insensitive", "grep", "ignore_case"}, {"-i", "grep", "ignore_case"},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.wrong] = true
		props := make([]string, 0, len(fields[c.tool]))
		for _, f := range fields[c.tool] {
			props = append(props, fmt.Sprintf("%q:{}", f))
		}
		schema := `{"type":"object","properties":{` + strings.Join(props, ",") + `},"additionalProperties":false}`
		a := newTool(t, schema, &recorder{}, Options{})
		raw, _ := json.Marshal(map[string]any{c.wrong: "x"})
		res := a.Call(t.Context(), session.New("s"), raw)
		want := fmt.Sprintf("%s: unknown field (did you mean %s?", c.wrong, c.want)
		if !strings.Contains(res.Text, want) {
			t.Errorf("%s on %s: the answer lacks %q:\n%s", c.wrong, c.tool, want, res.Text)
		}
	}
	for wrong := range confusions {
		if !covered[wrong] {
			t.Errorf("confusion %q has no case here", wrong)
		}
	}
}
