package hostile

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenignResolve: everyday work around role arguments, worktrees and
// skills runs without an ask, with no answerer and no -y.
func TestBenignResolve(t *testing.T) {
	t.Parallel()
	// gitRun runs git in dir with the env's home, failing the test on error.
	gitRun := func(e *env, dir string, args ...string) {
		e.t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@t", "-c", "user.name=t", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		cmd.Env = e.environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			e.t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	cases := []struct {
		name  string
		flags []string
		// setup prepares the env and returns the call to make and what
		// its result must show.
		setup func(t *testing.T, e *env) (tool string, args map[string]any, want []string)
	}{
		{name: "relative read_file", setup: func(_ *testing.T, e *env) (string, map[string]any, []string) {
			e.write("docs/guide.md", "the guide\n")
			return "read_file", map[string]any{"path": "docs/guide.md"}, []string{"the guide"}
		}},
		{name: "relative read with ./ and ..", setup: func(_ *testing.T, e *env) (string, map[string]any, []string) {
			e.write("docs/guide.md", "the guide\n")
			e.write("src/a.go", "package a\n")
			return "read_file", map[string]any{"path": "./src/../docs/guide.md"}, []string{"the guide"}
		}},
		{name: "a file whose name starts with a space", setup: func(_ *testing.T, e *env) (string, map[string]any, []string) {
			e.write(" spaced.txt", "leading space file\n")
			return "read_file", map[string]any{"path": " spaced.txt"}, []string{"leading space file"}
		}},
		{name: "grep a relative folder", setup: func(_ *testing.T, e *env) (string, map[string]any, []string) {
			e.write("pkg/x.go", "package pkg // marker-grep\n")
			return "grep", map[string]any{"pattern": "marker-grep", "path": "pkg"}, []string{"x.go"}
		}},
		{name: "search_files with the path left out", setup: func(_ *testing.T, e *env) (string, map[string]any, []string) {
			e.write("a/b/wanted.txt", "x\n")
			return "search_files", map[string]any{"pattern": "wanted.txt"}, []string{"a/b/wanted.txt"}
		}},
		{name: "custom plugin reads a relative path", setup: func(_ *testing.T, e *env) (string, map[string]any, []string) {
			e.write("count/me.txt", "one two three\n")
			e.pin("naive")
			return "word_count", map[string]any{"path": "count/me.txt"}, []string{`"words":3`}
		}},
		{name: "git worktree add: the worktree reads its main checkout", setup: func(t *testing.T, e *env) (string, map[string]any, []string) {
			main := filepath.Join(e.root, "main")
			e.write(filepath.Join(main, "README.md"), "main checkout readme\n")
			gitRun(e, main, "init", "-q")
			gitRun(e, main, "add", ".")
			gitRun(e, main, "commit", "-qm", "init")
			wt := filepath.Join(e.root, "wt")
			gitRun(e, main, "worktree", "add", "-q", wt)
			e.workspace = wt
			return "read_file", map[string]any{"path": filepath.Join(main, "README.md")}, []string{"main checkout readme"}
		}},
		{name: "git worktree add inside the main checkout", setup: func(t *testing.T, e *env) (string, map[string]any, []string) {
			main := filepath.Join(e.root, "main")
			e.write(filepath.Join(main, "notes.md"), "main notes\n")
			e.write(filepath.Join(main, ".gitignore"), ".worktrees/\n")
			gitRun(e, main, "init", "-q")
			gitRun(e, main, "add", ".")
			gitRun(e, main, "commit", "-qm", "init")
			wt := filepath.Join(main, ".worktrees", "feature")
			gitRun(e, main, "worktree", "add", "-q", "-b", "feature", wt)
			e.workspace = wt
			return "read_file", map[string]any{"path": filepath.Join(main, "notes.md")}, []string{"main notes"}
		}},
		{name: "a skill inside the workspace", setup: func(_ *testing.T, e *env) (string, map[string]any, []string) {
			e.write(".yagent/skills/release/SKILL.md", "---\nname: release\ndescription: Cut a release.\n---\nTag, then push.\n")
			return "use_skill", map[string]any{"name": "release"}, []string{"Tag, then push."}
		}},
		{name: "a skill whose SKILL.md links within its folder", setup: func(_ *testing.T, e *env) (string, map[string]any, []string) {
			e.write(".yagent/skills/docs/real.md", "---\nname: docs\n---\nWrite the docs.\n")
			e.symlink("real.md", ".yagent/skills/docs/SKILL.md")
			return "use_skill", map[string]any{"name": "docs"}, []string{"Write the docs."}
		}},
		{name: "a user skill in the home folder", setup: func(_ *testing.T, e *env) (string, map[string]any, []string) {
			e.write(filepath.Join(e.home, ".yagent", "skills", "mine", "SKILL.md"), "---\nname: mine\n---\nMy own steps.\n")
			return "use_skill", map[string]any{"name": "mine"}, []string{"My own steps."}
		}},
		{name: "find_references with a replace inside the workspace", setup: func(_ *testing.T, e *env) (string, map[string]any, []string) {
			e.write("lib/go.mod", "module example.com/lib\n\ngo 1.21\n")
			e.write("lib/lib.go", "package lib\n\n// Greet greets.\nfunc Greet() string { return \"hi\" }\n")
			e.write("go.mod", "module example.com/ws\n\ngo 1.21\n\nrequire example.com/lib v0.0.0\n\nreplace example.com/lib => ./lib\n")
			e.write("main.go", "package main\n\nimport \"example.com/lib\"\n\nfunc main() { println(lib.Greet()) }\n")
			return "find_references", map[string]any{"name": "Greet"}, []string{"resolved with the Go type checker", "main.go:5"}
		}},
		{name: "web_fetch of a granted bare host", setup: func(t *testing.T, e *env) (string, map[string]any, []string) {
			marker := "BENIGN-" + filepath.Base(e.root)
			port := resolveServePage(t, marker)
			resolveAllowHosts(e, "localhost")
			return "web_fetch", map[string]any{"url": "localhost:" + port + "/docs"}, []string{marker}
		}},
		{name: "browser_navigate to a bare localhost the profile grants", flags: []string{"--profile", "browser"}, setup: func(t *testing.T, e *env) (string, map[string]any, []string) {
			marker := "BENIGN-" + filepath.Base(e.root)
			port := resolveServePage(t, marker)
			resolveAllowHosts(e, "localhost")
			return "browser_navigate", map[string]any{"url": "localhost:" + port}, []string{marker}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			tool, args, want := tc.setup(t, e)
			r := e.serve(tc.flags...).call(t, tool, args)
			if tool == "browser_navigate" && r.Code != "" && !strings.Contains(r.Text, "needs the user's authorization") {
				t.Skipf("no usable browser here: %s", r)
			}
			allowed(t, r, want...)
		})
	}
}
