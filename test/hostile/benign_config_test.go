package hostile

import (
	"path/filepath"
	"testing"
)

// TestBenignConfig: a project that narrows the profile, and the user's
// own grants, work without an ask and without -y.
func TestBenignConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(e *env) (tool string, args map[string]any, want []string)
	}{
		{"a project denying a tool still reads", func(e *env) (string, map[string]any, []string) {
			e.configProject("config.yaml", "deny: [web_fetch, browser_*]\n")
			e.write("a.txt", "kept words\n")
			return "read_file", map[string]any{"path": "a.txt"}, []string{"kept words"}
		}},
		{"a project ask rule leaves other commands alone", func(e *env) (string, map[string]any, []string) {
			e.configProject("config.yaml", "exec: {rules: [{action: ask, program: make}, {action: deny, program: curl}]}\n")
			e.write("a.txt", "plain words\n")
			return "run_bash", map[string]any{"command": "cat a.txt"}, []string{"plain words"}
		}},
		{"a project narrowing families keeps the rest", func(e *env) (string, map[string]any, []string) {
			e.configProject("config.yaml", "families: [fs, search, cognitive]\n")
			e.write("src/main.go", "package main // needle\n")
			return "grep", map[string]any{"pattern": "needle", "path": "src"}, []string{"main.go"}
		}},
		{"the user's own read_paths work", func(e *env) (string, map[string]any, []string) {
			e.write(filepath.Join(e.outside, "docs", "ref.txt"), "reference text\n")
			e.configUser("config.yaml", "read_paths: ["+filepath.Join(e.outside, "docs")+"]\n")
			return "read_file", map[string]any{"path": filepath.Join(e.outside, "docs", "ref.txt")}, []string{"reference text"}
		}},
		{"the user's own profile with a project config", func(e *env) (string, map[string]any, []string) {
			e.configUser("profiles/mine.yaml", "families: [fs, shell, search, cognitive]\nexec: {rules: [{action: deny, program: curl}]}\n")
			e.configUser("config.yaml", "profile: mine\n")
			e.configProject("config.yaml", "deferred: on\n")
			e.write("a.txt", "mine works\n")
			return "run_bash", map[string]any{"command": "cat a.txt"}, []string{"mine works"}
		}},
		{"a managed deny leaves everyday commands alone", func(e *env) (string, map[string]any, []string) {
			e.managedWrite("config.yaml", "exec: {rules: [{action: deny, program: curl}]}\ndeny: [web_fetch]\n")
			e.write("a.txt", "daily work\n")
			return "run_bash", map[string]any{"command": "cat a.txt"}, []string{"daily work"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			tool, args, want := tc.setup(e)
			allowed(t, e.serve().call(t, tool, args), want...)
		})
	}
}
