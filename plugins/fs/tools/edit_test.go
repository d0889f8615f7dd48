package tools

import (
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

func TestSearchReplace_GuidesFailures(t *testing.T) {
	t.Parallel()
	content := "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n"
	tests := []struct {
		name     string
		input    map[string]any
		code     string
		contains []string
	}{
		{"not found names the closest region",
			map[string]any{"old_string": "func b() {\n\treturn 2\n}", "new_string": "x"},
			sdk.CodeSearchNotFound, []string{"line 5", "2 of its 3", "line 6", `file:  "\treturn 1"`, `yours: "\treturn 2"`}},
		{"several matches",
			map[string]any{"old_string": "\treturn 1\n", "new_string": "\treturn 2\n"},
			sdk.CodeSearchNotUnique, []string{"2 times", "lines 2, 6", "replace_all"}},
		{"identical strings",
			map[string]any{"old_string": "x", "new_string": "x"},
			sdk.CodeInvalidInput, []string{"identical"}},
		{"large block advice",
			map[string]any{"old_string": strings.Repeat("nope\n", 41), "new_string": "x"},
			sdk.CodeSearchNotFound, []string{"41 lines", "Split it"}},
		{"missing file",
			map[string]any{"path": "missing.go", "old_string": "a", "new_string": "b"},
			sdk.CodeNotFound, []string{"write_file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.write("f.go", content)
			if _, ok := tt.input["path"]; !ok {
				tt.input["path"] = "f.go"
			}
			te := e.fail("search_replace_in_file", tt.input, tt.code)
			mustContain(t, "error", te.Message, tt.contains...)
			if got := e.read("f.go"); got != content {
				t.Errorf("file changed on a failed edit: %q", got)
			}
		})
	}
}

func TestSearchReplace_OversizedStringsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("f.txt", "a\n")
	big := strings.Repeat("x", 10<<20+1)
	for _, in := range []map[string]any{
		{"path": "f.txt", "old_string": big, "new_string": "y"},
		{"path": "f.txt", "old_string": "a", "new_string": big},
	} {
		te := e.fail("search_replace_in_file", in, sdk.CodeInvalidInput)
		mustContain(t, "error", te.Message, "over the limit")
	}
}

func TestSearchReplace_RelaxedMatchIsReportedWithDiff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("f.go", "func f() {\n\tif ok {\n\t\trun()\n\t}\n}\n")
	res := e.run("search_replace_in_file", map[string]any{"path": "f.go",
		"old_string": "if ok {\n    run()\n}", "new_string": "if ok {\n    run()\n    stop()\n}"})
	if got, want := e.read("f.go"), "func f() {\n\tif ok {\n\t\trun()\n\t\tstop()\n\t}\n}\n"; got != want {
		t.Errorf("file: got %q, want %q", got, want)
	}
	if len(noteDetails(res, "whitespace_relaxed")) != 1 || len(noteDetails(res, "reindented")) != 1 {
		t.Errorf("notes: %v, want whitespace_relaxed and reindented", res.Notes)
	}
	mustContain(t, "result", res.Text, "--- a/f.go", "+\t\tstop()")
	if d := res.Data.(EditData); !strings.Contains(d.Diff, "+\t\tstop()") {
		t.Errorf("data diff: %q", d.Diff)
	}
}

func TestSearchReplace_ReplaceAll(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("f.go", "x := old\ny := old\n")
	res := e.run("search_replace_in_file", map[string]any{"path": "f.go", "old_string": "old", "new_string": "new", "replace_all": true})
	if got := e.read("f.go"); got != "x := new\ny := new\n" {
		t.Errorf("file: %q", got)
	}
	mustContain(t, "result", res.Text, "2 occurrences")
}

func TestSearchReplace_KeepsEncodingAndBOM(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, file, old, new, want string }{
		{"utf-8 bom", "\xEF\xBB\xBFa = 1\n", "a = 1", "a = 2", "\xEF\xBB\xBFa = 2\n"},
		{"utf-16le", "\xFF\xFEa\x00\n\x00", "a", "é", "\xFF\xFE\xe9\x00\n\x00"},
		{"utf-16be", "\xFE\xFF\x00a\x00\n", "a", "b", "\xFE\xFF\x00b\x00\n"},
		{"gb18030", "\xc4\xe3\xba\xc3\n", "你好", "再见", "\xd4\xd9\xbc\xfb\n"},
		{"utf-8 bom twice", "\xEF\xBB\xBF\xEF\xBB\xBFa = 1\n", "a = 1", "a = 2", "\xEF\xBB\xBF\xEF\xBB\xBFa = 2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.write("f.txt", tt.file)
			res := e.run("search_replace_in_file", map[string]any{"path": "f.txt", "old_string": tt.old, "new_string": tt.new})
			if got := e.read("f.txt"); got != tt.want {
				t.Errorf("file: got %q, want %q", got, tt.want)
			}
			if len(noteDetails(res, "encoding")) != 1 {
				t.Errorf("notes: %v, want one naming the encoding", res.Notes)
			}
		})
	}
}

func TestSearchReplace_RefusesUndecodable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	content := "ok line\nbad \xff\xfe\xfd here\n"
	e.write("f.txt", content)
	te := e.fail("search_replace_in_file", map[string]any{"path": "f.txt", "old_string": "ok", "new_string": "OK"}, sdk.CodeInvalidInput)
	mustContain(t, "error", te.Message, "0xFF", "offset 12", "line 2")
	// An unpaired surrogate would come back as U+FFFD: refused, not changed.
	e.write("u16.txt", "\xFF\xFEa\x00\x00\xd8\n\x00")
	te = e.fail("search_replace_in_file", map[string]any{"path": "u16.txt", "old_string": "a", "new_string": "b"}, sdk.CodeInvalidInput)
	mustContain(t, "error", te.Message, "unpaired surrogate")
	if got := e.read("u16.txt"); got != "\xFF\xFEa\x00\x00\xd8\n\x00" {
		t.Errorf("refused edit changed the file: %q", got)
	}
	e.write("bin.dat", "a\x00b")
	te = e.fail("search_replace_in_file", map[string]any{"path": "bin.dat", "old_string": "a", "new_string": "b"}, sdk.CodeInvalidInput)
	mustContain(t, "error", te.Message, "binary")
}

func TestMultiEdit_AllOrNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	content := "one\ntwo\nthree\n"
	e.write("f.txt", content)
	te := e.fail("multi_edit", map[string]any{"path": "f.txt", "edits": []map[string]any{
		{"old_string": "one", "new_string": "1"},
		{"old_string": "two", "new_string": "2"},
		{"old_string": "four", "new_string": "4"},
	}}, sdk.CodeSearchNotFound)
	mustContain(t, "error", te.Message, "edit 3 of 3", "file is unchanged")
	if got := e.read("f.txt"); got != content {
		t.Errorf("file after a failed multi_edit: %q, want it untouched", got)
	}
	res := e.run("multi_edit", map[string]any{"path": "f.txt", "edits": []map[string]any{
		{"old_string": "one", "new_string": "1"},
		{"old_string": "1\ntwo", "new_string": "1\n2"},
	}})
	if got := e.read("f.txt"); got != "1\n2\nthree\n" {
		t.Errorf("file: %q", got)
	}
	mustContain(t, "result", res.Text, "applied 2 edits")
	e.fail("multi_edit", map[string]any{"path": "f.txt", "edits": []map[string]any{}}, sdk.CodeInvalidInput)
	te = e.fail("multi_edit", map[string]any{"path": "f.txt", "edits": []map[string]any{
		{"old_string": "three", "new_string": "3"}, {"old_string": "x", "new_string": "x"},
	}}, sdk.CodeInvalidInput)
	mustContain(t, "error", te.Message, "edit 2 of 2", "identical")
}

func TestTools_Specs(t *testing.T) {
	t.Parallel()
	want := map[string]struct {
		effect sdk.Effect
		role   sdk.Role
	}{
		"list_dir":               {sdk.EffectRead, sdk.RolePathRead},
		"multi_edit":             {sdk.EffectWrite, sdk.RolePathWrite},
		"read_file":              {sdk.EffectRead, sdk.RolePathRead},
		"search_replace_in_file": {sdk.EffectWrite, sdk.RolePathWrite},
		"write_file":             {sdk.EffectWrite, sdk.RolePathWrite},
	}
	tools := New().Tools()
	if len(tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(tools), len(want))
	}
	for _, tl := range tools {
		sp := tl.Spec()
		w, ok := want[sp.Name]
		if !ok {
			t.Errorf("unexpected tool %s", sp.Name)
			continue
		}
		if sp.Effect != w.effect || sp.Roles["path"] != w.role || sp.Description == "" || len(sp.InputSchema) == 0 {
			t.Errorf("%s: effect %s, roles %v, description %d bytes", sp.Name, sp.Effect, sp.Roles, len(sp.Description))
		}
	}
}
