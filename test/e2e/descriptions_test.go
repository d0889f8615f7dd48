package e2e

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolFacts names, per tool, what its description and the descriptions of
// its parameters must keep for a model to choose and call it right: when
// to use it (or another tool), the rules of its key parameters and the
// failure codes it returns. Each fact is a regexp over the tool's prose:
// the description, then one "param: description" line per described
// parameter (nested ones as "edits.old_string: ..."). A shorter text may
// word a fact anew, never drop it.
var toolFacts = map[string][]string{
	// host-native
	"agent_exit": {
		`once, last`, `client as given`,
		`summary: .*not done`, `summary: .*user must know`,
		`handoff: .*continue`, `blueprint: .*next phase`,
	},
	"ask_user_for_help": {`one clear question`, `blocked on a decision only`},
	"load_tool":         {"`names`", "`query`", `stay listed`, `Deferred:`, `web browser`, `refs from browser_snapshot`},

	// fs
	"read_file": {
		"`offset` \\(1-based line, default 1\\)", "`limit` lines \\(default and max 2000",
		"ends with the `offset` to go on from", `[Bb]inary files are described`, `folders: list_dir`,
	},
	"write_file": {
		`whole file`, `folders made`, `part of a file use search_replace_in_file or multi_edit`,
		`[Ee]ncoding and line endings are kept`,
	},
	"search_replace_in_file": {
		"[Cc]opy `old_string` from the file \\(read it first\\)", `match one place`,
		`if one place fits`, `repaired and shown`,
		"`search_not_found` \\(closest region", "`search_not_unique` \\(add context, or `replace_all`: exact only",
		"`write_conflict` \\(changed since read",
	},
	"multi_edit": {
		`in order, all or nothing`, `each sees the file the ones before left`,
		`search_replace_in_file's rules and codes`, `the error names the one that failed`, `40\+ lines`,
	},
	"list_dir": {"`depth` levels \\(default 2, max 5\\)", `symlinks unfollowed`, `grep, search_files`},

	// shell
	"run_bash": {
		"`bash -c` in the workspace root", `stdout\+stderr and the exit code`,
		"`yield_time_ms` \\(default 15000\\)", "becomes a task \\(`task_id`",
		`shell_wait, write_stdin, shell_cancel`,
		"`timeout_ms` \\(default 600000\\) kills it and its children, task or not",
		"`is_background`: for servers, what must outlive the call",
		"stdin is empty unless `mode` gives a terminal", "`pty` for other prompts",
		"`is_dangerous`: set it to delete, overwrite, publish or act outside the workspace: the user is asked",
		`writes only to the workspace, temp, caches`, "`yagent sandbox:` line says what was refused",
		`name the path literally`, "`Permission denied`", `head and tail`,
	},
	"shell_wait": {
		"`timeout_ms` \\(default 30000\\)", `new output and how it ended`,
		`call again or shell_cancel`, `prompt.* returns early: answer with write_stdin`,
	},
	"write_stdin": {
		"`input`, then `keys`",
		`a line to a shell as run_bash`, `other programs asks the user`, `keys alone are not`,
	},
	"shell_cancel": {`all it started`, `last output`},
	"shell_tasks":  {`status, pid`, `unread output`, `leaves the list once shell_wait, write_stdin or shell_cancel`},

	// search
	"grep": {
		"`path:line:text`", "`pattern`: RE2", `per line, no lookaround`, "escape `\\\\\\( \\\\.` or set `literal`",
		"`glob`: `\\*\\.go`", "`!\\*_test\\.go`", `comma-separated`,
		"`max_results`: default 100", `[Ss]kips ignored, hidden and binary files unless named`,
	},
	"search_files": {
		"`pattern` without `/` matches names at any depth", "with `/` the path under `path`",
		"`max_results`: default 200", `[Ss]kips ignored and hidden files unless the pattern names them`,
		`Contents: grep`,
	},
	"code_outline": {
		"`lines kind signature`", `before read_file`, "`symbol`, a Go function or method",
		`signature, lines and callees`, `narrows the outline`, `Callers: find_references`,
	},
	"find_symbol": {"`path:line kind name`", "`Type\\.Name` for a method, field", `Universal Ctags`, `Uses: find_references`},
	"find_references": {
		`definitions left out`, "`Type\\.Name` for one Go type", `type-checked`, "`callers`",
		`whole-word`, `At most 300 uses`, `Definition: find_symbol`,
	},
	"web_fetch": {
		"absolute http\\(s\\) `url` as Markdown", `binary refused`, `local files use read_file`,
		"`max_bytes`: default and max 5 MB", `Same-host redirects are followed`, `another host's URL is returned`,
		`30 s limit`, `does not grant asks the user`,
	},

	// cognitive
	"think":       {`without acting`, `nothing is recorded`},
	"update_plan": {`whole plan each time replaces`, `one step in_progress`, `Skip it for one obvious step`},
	"todo_write":  {`whole list each time`, `left out are dropped`, "unique `id`", `todo_read`},
	"todo_read":   {`todo_write`},
	"use_skill":   {`SKILL\.md`, `relative to its folder`, `unknown name lists the skills`},

	// browser
	"browser_click": {
		"`ref` \\(from the latest browser_snapshot; preferred\\)", "`selector` matching exactly one",
		`returns what changed \(the new page's snapshot after a navigation\)`, `dialog it opens is answered`, `ref: .*Give ref or selector`,
	},
	"browser_close":            {`all its tabs`, `fresh one`},
	"browser_console_messages": {`oldest first`, "`\\[level\\] text`", `newest 500`},
	"browser_evaluate": {
		`result as JSON`, `statements \(the last value is returned\)`, `function \(called\)`, "`await` works",
		`asked before every call`,
	},
	"browser_hover":         {"`ref` or `selector`", `then browser_snapshot`},
	"browser_navigate":      {`https:// is added \(http:// for localhost\)`, `other than http\(s\) may ask the user`, `refs`, `browser_click`},
	"browser_navigate_back": {`[Gg]o back`, `snapshot`},
	"browser_press_key":     {`focused element`, `Enter`, `one character`, `Shift\+Tab`},
	"browser_select_option": {"`values` \\(by value, then visible label\\)", `replacing the selection`, "`ref` or `selector`"},
	"browser_snapshot":      {`accessibility tree`, `Prefer it to a screenshot`, `old refs are refused: snapshot again`},
	"browser_tabs": {
		"`action`: list", `new \(at .url., http\(s\) only`, "select `index`", "close `index` \\(default the current",
		`last tab stays: browser_close`,
	},
	"browser_take_screenshot": {"`full_page`", `\.yagent/screenshots`, "base name of `filename`", `browser_snapshot is cheaper`},
	"browser_type":            {`replacing its content`, `empty clears it`, "`submit` presses Enter", `set to .text. as its value`, `Returns what changed`},
	"browser_wait_for": {
		"`text` appears or `text_gone` disappears", `default 10000`, `not met is an error`,
		"`time_ms` alone, that long \\(max 120000\\)",
	},
}

// TestDescriptionsKeepTheirFacts runs bin/yagent serve with every family
// (profile full, deferred tools on), loads every Cold tool named in
// load_tool's catalog, and checks each tool's prose against its row of
// toolFacts. A tool served without a row fails, and so does a row for a
// tool nobody serves.
func TestDescriptionsKeepTheirFacts(t *testing.T) {
	e := newEnv(t)
	e.dirs = []string{pluginsDir} // first-party plugins only
	c := e.serve([]string{"YAGENT_DEFERRED=on"}, "--profile", "full")

	up := listedTools(t, c)
	lt, ok := up["load_tool"]
	if !ok {
		t.Fatalf("load_tool is not listed with deferred tools on; listed: %v", keys(up))
	}
	// A catalog line is "name: brief", or what a family is for after its
	// tools' names, "prefix_{a,b}" or "a, b".
	catalog := regexp.MustCompile(`(?m)^(?:([a-z_]+)\{([a-z_,]+)\}|([a-z_]+(?:, [a-z_]+)*)): \S`).FindAllStringSubmatch(lt.Description, -1)
	var cold []string
	for _, m := range catalog {
		if m[1] == "" {
			cold = append(cold, strings.Split(m[3], ", ")...)
			continue
		}
		for _, rest := range strings.Split(m[2], ",") {
			cold = append(cold, m[1]+rest)
		}
	}
	if len(cold) == 0 {
		t.Fatalf("load_tool's description names no deferred tool:\n%s", lt.Description)
	}
	r := c.call(t, "load_tool", map[string]any{"names": cold})
	if r.IsError {
		t.Fatalf("load_tool %v: %s", cold, text(r))
	}
	all := listedTools(t, c)
	for _, n := range cold {
		if _, ok := all[n]; !ok {
			t.Errorf("%s is in load_tool's catalog but not listed once loaded", n)
		}
	}
	for n := range all {
		if _, listed := up[n]; !listed && !slices.Contains(cold, n) {
			t.Errorf("%s was neither listed up front nor in load_tool's catalog", n)
		}
	}

	for _, name := range keys(all) {
		facts, ok := toolFacts[name]
		if !ok {
			t.Errorf("%s has no row in toolFacts: name what its description must keep", name)
			continue
		}
		prose := toolProse(t, all[name])
		for _, f := range facts {
			if !regexp.MustCompile(f).MatchString(prose) {
				t.Errorf("%s lost a fact: no match for /%s/ in:\n%s", name, f, prose)
			}
		}
	}
	for name := range toolFacts {
		if _, ok := all[name]; !ok {
			t.Errorf("toolFacts has a row for %s, which profile full does not serve", name)
		}
	}
}

func listedTools(t *testing.T, c *client) map[string]*mcp.Tool {
	t.Helper()
	out := map[string]*mcp.Tool{}
	for _, tl := range c.tools(t) {
		out[tl.Name] = tl
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// toolProse is the text a model reads about tl: its description, then a
// "param: description" line for each described parameter, nested ones
// named by their path.
func toolProse(t *testing.T, tl *mcp.Tool) string {
	t.Helper()
	raw, err := json.Marshal(tl.InputSchema)
	if err != nil {
		t.Fatalf("%s: schema: %v", tl.Name, err)
	}
	var schema propSchema
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatalf("%s: schema %s: %v", tl.Name, raw, err)
	}
	var b strings.Builder
	b.WriteString(tl.Description)
	schema.describe(&b, "")
	return b.String()
}

type propSchema struct {
	Description string                `json:"description"`
	Properties  map[string]propSchema `json:"properties"`
	Items       *propSchema           `json:"items"`
}

func (s propSchema) describe(b *strings.Builder, prefix string) {
	for _, name := range keys(s.Properties) {
		p := s.Properties[name]
		if p.Description != "" {
			b.WriteString("\n" + prefix + name + ": " + p.Description)
		}
		p.describe(b, prefix+name+".")
		if p.Items != nil {
			p.Items.describe(b, prefix+name+".")
		}
	}
}
