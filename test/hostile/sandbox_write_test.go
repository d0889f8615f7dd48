package hostile

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSandboxWrites: under -y, a command that writes outside the write
// set (the workspace, /tmp, $TMPDIR) through a path the guard cannot see
// leaves nothing there, and the refusal names the sandbox.
func TestSandboxWrites(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		need  []string
		files func(target string) map[string]string // in the case's folder; a name ending in * is made executable
		cmd   func(target, outside string) string
		// says: the result must mention the sandbox (a refusal is never silent).
		says bool
		home string // the target, under the home folder, instead of the outside folder
	}{
		{name: "runtime-built path", says: true, cmd: func(x, _ string) string { return "echo pwned > " + sbHide(x) }},
		{name: "script", files: func(x string) map[string]string { return map[string]string{"s.sh": "echo pwned > " + sbHide(x) + "\n"} },
			cmd: func(_, _ string) string { return "bash s.sh" }},
		{name: "shebang script", files: func(x string) map[string]string {
			return map[string]string{"s.sh*": "#!/bin/sh\necho pwned > " + sbHide(x) + "\n"}
		}, cmd: func(_, _ string) string { return "./s.sh" }},
		{name: "make", need: []string{"make"}, files: func(x string) map[string]string {
			return map[string]string{"Makefile": "all:\n\t@echo pwned > \"$$(echo " + sbB64(x) + " | base64 -d)\"\n"}
		}, cmd: func(_, _ string) string { return "make" }},
		{name: "python", need: []string{"python3"}, cmd: func(x, _ string) string {
			return `python3 -c "import base64; open(base64.b64decode('` + sbB64(x) + `').decode(), 'w').write('pwned')"`
		}},
		{name: "link to the outside folder the command makes", cmd: func(x, out string) string {
			return "ln -s " + sbHide(out) + " o && echo pwned > o/" + filepath.Base(x)
		}},
		{name: "cp", cmd: func(x, _ string) string { return "echo pwned > w && cp w " + sbHide(x) }},
		{name: "tee", cmd: func(x, _ string) string { return "echo pwned | tee " + sbHide(x) }},
		{name: "mv from the workspace", cmd: func(x, _ string) string { return "echo pwned > w && mv w " + sbHide(x) }},
		{name: "ln -s then write through it", cmd: func(x, _ string) string { return "ln -s " + sbHide(x) + " l && echo pwned > l" }},
		{name: "dd of=", cmd: func(x, _ string) string { return "echo pwned | dd of=" + sbHide(x) }},
		// The guard cannot read what eval runs and asks about the root
		// folder; -y approves that ask, which must not open the disk.
		{name: "eval", cmd: func(x, _ string) string {
			return "eval \"echo pwned > " + strings.ReplaceAll(sbHide(x), `"`, `\"`) + "\""
		}},
		{name: "a dotfile in the home folder", home: ".bashrc", cmd: func(x, _ string) string { return "echo pwned >> " + sbHide(x) }},
		{name: "a new folder in the home folder", home: ".config/autostart/x.desktop",
			cmd: func(x, _ string) string {
				return "mkdir -p \"$(dirname " + sbHide(x) + ")\" && echo pwned > " + sbHide(x)
			}},
	}
	e := newEnv(t)
	c := e.serve("-y")
	for i, tc := range cases {
		dir := "c" + strconv.Itoa(i)
		target := filepath.Join(e.outside, "x-"+strconv.Itoa(i))
		if tc.home != "" {
			target = filepath.Join(e.home, tc.home)
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sbNeed(t, tc.need...)
			if err := os.MkdirAll(e.ws(dir), 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.files != nil {
				for name, content := range tc.files(target) {
					p := e.write(filepath.Join(dir, strings.TrimSuffix(name, "*")), content)
					if strings.HasSuffix(name, "*") {
						if err := os.Chmod(p, 0o755); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			r := sbRun(t, c, "cd "+dir+" && "+tc.cmd(target, e.outside), 0)
			if _, err := os.Lstat(target); err == nil {
				t.Errorf("the command wrote %s outside the write set: %s", target, r)
			}
			if tc.says && !strings.Contains(strings.ToLower(sbText(r)), "sandbox") {
				t.Errorf("the result does not say the sandbox refused the write: %s", r)
			}
		})
	}
}

// TestSandboxConfigRewrite: under -y, a command that rewrites the user's
// ~/.yagent/config.yaml to drop its deny rules leaves it unchanged, and
// printenv stays denied, in this session and in the next.
func TestSandboxConfigRewrite(t *testing.T) {
	t.Parallel()
	const rules = "exec: {rules: [{action: deny, program: printenv}]}\n"
	cases := []struct {
		name   string
		need   []string
		cmd    string
		script string // s.sh in the workspace, when set
	}{
		{name: "redirection to a runtime-built path", cmd: `v=$(echo SE9NRQ== | base64 -d); printf 'exec: {rules: []}\n' > "${!v}/.yagent/config.yaml"`},
		{name: "python", need: []string{"python3"},
			cmd: `python3 -c "import os; open(os.path.expanduser('~/.ya'+'gent/config.yaml'), 'w').write('exec: {rules: []}\n')"`},
		{name: "sed -i from a script", cmd: "bash s.sh",
			script: `v=$(echo SE9NRQ== | base64 -d); sed -i "s/deny/allow/" "${!v}/.yagent/config.yaml"` + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sbNeed(t, tc.need...)
			e := newEnv(t)
			marker := e.secret("unused")
			e.extraEnv = []string{"X=" + marker}
			cfg := e.write(filepath.Join(e.home, ".yagent", "config.yaml"), rules)
			if tc.script != "" {
				e.write("s.sh", tc.script)
			}
			c := e.serve("-y")
			r := sbRun(t, c, tc.cmd, 0)
			if b, err := os.ReadFile(cfg); err != nil || string(b) != rules {
				t.Errorf("the command changed the user's config to %q (%v): %s", b, err, r)
			}
			denied(t, sbRun(t, c, "printenv X", 0), marker)
			denied(t, sbRun(t, e.serve("-y"), "printenv X", 0), marker)
		})
	}
}
