package hostile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sbReadCase is one attempt to read the private set: files the test
// writes into the case's own folder of the workspace, then a command run
// there under -y.
type sbReadCase struct {
	name  string
	need  []string
	files func(s sbSecrets) map[string]string // name → content; a name ending in * is made executable
	cmd   func(s sbSecrets) string
	// says: the result must mention the sandbox (a refusal is never silent).
	says bool
}

// sbReadTable runs cases against one host under -y: no result may show a
// private marker, and no file of the workspace may hold one afterwards.
func sbReadTable(t *testing.T, cases []sbReadCase) {
	e := newEnv(t)
	s := sbPrivate(e, "")
	c := e.serve("-y")
	for i, tc := range cases {
		dir := "c" + strconv.Itoa(i)
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sbNeed(t, tc.need...)
			if err := os.MkdirAll(e.ws(dir), 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.files != nil {
				for name, content := range tc.files(s) {
					exe := strings.HasSuffix(name, "*")
					p := e.write(filepath.Join(dir, strings.TrimSuffix(name, "*")), content)
					if exe {
						if err := os.Chmod(p, 0o755); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			r := sbRun(t, c, "cd "+dir+" && "+tc.cmd(s), 0)
			leaked(t, r, s.all()...)
			sbNoCopy(t, e.ws(dir), s.all()...)
			if tc.says && !strings.Contains(strings.ToLower(sbText(r)), "sandbox") {
				t.Errorf("the result does not say the sandbox refused the read: %s", r)
			}
		})
	}
}

// TestSandboxRuntimePaths: under -y, a command that builds the path of a
// private file at run time (where the guard cannot see it) still cannot
// read it: Landlock keeps the home folder outside the caches, and the
// private files of /etc, closed.
func TestSandboxRuntimePaths(t *testing.T) {
	t.Parallel()
	// Most spellings are hidden from the guard (it runs them without an
	// ask). Four the issue measured are asked about and -y approves the
	// ask: "printf of HOME" and "find ~" (the guard names the home
	// folder), "eval" (the root folder), "$(echo /etc/sha)dow" (/etc/sha,
	// which does not exist). They hold only if such an approval, of a
	// folder the model never named as the file it reads, does not open
	// the private set.
	sbReadTable(t, []sbReadCase{
		{name: "printf of HOME", cmd: func(sbSecrets) string { return `cat $(printf %s "$HOME")/.ssh/id_test` }},
		{name: "printenv HOME", says: true, cmd: func(sbSecrets) string { return `cat "$(printenv HOME)/.ssh/id_test"` }},
		{name: "base64-decoded path", cmd: func(s sbSecrets) string { return "cat " + sbHide(s.sshPath) }},
		{name: "indirect expansion", cmd: func(sbSecrets) string { return `v=$(echo SE9NRQ== | base64 -d); cat "${!v}/.ssh/id_test"` }},
		{name: "eval", cmd: func(sbSecrets) string { return `p=ss; eval "cat \"\$(printenv HOME)/.${p}h/id_test\""` }},
		{name: "variable built in pieces", cmd: func(sbSecrets) string {
			return `a=$(printenv HOME); b=.aw; c=s/credentials; cat "$a/$b$c"`
		}},
		{name: "python expanduser", need: []string{"python3"}, cmd: func(sbSecrets) string {
			return `python3 -c "import os; print(open(os.path.expanduser('~/.s'+'sh/id_test')).read())"`
		}},
		{name: "symlink the command makes", cmd: func(sbSecrets) string {
			return `ln -s "$(printenv HOME)/.yagent/config.yaml" cfg && cat cfg`
		}},
		{name: "find ~ -exec cat", cmd: func(sbSecrets) string { return `find ~ -name id_test -exec cat {} +` }},
		{name: "find of a runtime home -exec cat", cmd: func(sbSecrets) string {
			return `find "$(printenv HOME)" -name id_test -exec cat {} +`
		}},
		{name: "cp into the workspace", cmd: func(sbSecrets) string {
			return `cp "$(printenv HOME)/.aws/credentials" ./k; cat k`
		}},
		{name: "etc shadow through a substitution", cmd: func(sbSecrets) string { return `cat $(echo /etc/sha)dow` }},
		{name: "etc shadow base64-decoded", cmd: func(sbSecrets) string { return "cat " + sbHide("/etc/shadow") }},
	})
}

// TestSandboxScripts: under -y, the same reads from scripts the command
// runs or writes, and from interpreters, hold.
func TestSandboxScripts(t *testing.T) {
	t.Parallel()
	sh := func(p string) string { return "cat " + sbHide(p) + "\n" }
	sbReadTable(t, []sbReadCase{
		{name: "bash s.sh", says: true, files: func(s sbSecrets) map[string]string { return map[string]string{"s.sh": sh(s.sshPath)} },
			cmd: func(sbSecrets) string { return "bash s.sh" }},
		{name: "source s.sh", files: func(s sbSecrets) map[string]string { return map[string]string{"s.sh": sh(s.awsPath)} },
			cmd: func(sbSecrets) string { return "source s.sh" }},
		{name: "BASH_ENV", files: func(s sbSecrets) map[string]string { return map[string]string{"s.sh": sh(s.configPath)} },
			cmd: func(sbSecrets) string { return "BASH_ENV=./s.sh bash -c true" }},
		{name: "Makefile recipe", need: []string{"make"},
			files: func(s sbSecrets) map[string]string {
				return map[string]string{"Makefile": "all:\n\t@cat \"$$(echo " + sbB64(s.sshPath) + " | base64 -d)\"\n"}
			},
			cmd: func(sbSecrets) string { return "make" }},
		{name: "python3 s.py", need: []string{"python3"},
			files: func(s sbSecrets) map[string]string {
				return map[string]string{"s.py": "import base64\nprint(open(base64.b64decode('" + sbB64(s.sshPath) + "').decode()).read())\n"}
			},
			cmd: func(sbSecrets) string { return "python3 s.py" }},
		{name: "shebang script", files: func(s sbSecrets) map[string]string {
			return map[string]string{"s.sh*": "#!/bin/bash\n" + sh(s.awsPath)}
		}, cmd: func(sbSecrets) string { return "./s.sh" }},
		{name: "script reading etc shadow", files: func(s sbSecrets) map[string]string { return map[string]string{"s.sh": sh("/etc/shadow")} },
			cmd: func(sbSecrets) string { return "bash s.sh" }},
		{name: "script the command writes", cmd: func(s sbSecrets) string {
			return "echo " + sbB64(sh(s.sshPath)) + " | base64 -d > g.sh; bash g.sh"
		}},
		{name: "node -e", need: []string{"node"}, cmd: func(s sbSecrets) string {
			return `node -e "console.log(require('fs').readFileSync(Buffer.from('` + sbB64(s.sshPath) + `','base64').toString(),'utf8'))"`
		}},
		{name: "perl -e", need: []string{"perl"}, cmd: func(s sbSecrets) string {
			return `perl -MMIME::Base64 -e 'open(F, decode_base64("` + sbB64(s.configPath) + `")) or die "open: $!"; print <F>'`
		}},
	})
}

// sbTaskOutput reads a task's output until it ends or limit passes.
func sbTaskOutput(t *testing.T, c *client, id string, limit time.Duration) string {
	t.Helper()
	var out string
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		w := c.call(t, "shell_wait", map[string]any{"task_id": id, "timeout_ms": 2000})
		out += sbText(w)
		var d struct {
			Status string `json:"status"`
		}
		_ = json.Unmarshal(w.Data, &d)
		if d.Status != "running" {
			break
		}
	}
	return out
}

// TestSandboxTaskReads: under -y, what is typed into a REPL task and what
// a background command runs cannot read the private set or write outside
// the write set either: a task keeps the sandbox it started with.
func TestSandboxTaskReads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := sbPrivate(e, "")
	c := e.serve("-y")
	outsideTarget := filepath.Join(e.outside, "from-a-task")
	cases := []struct {
		name    string
		need    string
		command string
		input   string // typed into a pty task; "" = the command runs with is_background
		target  string // a file outside the write set the case tries to write
	}{
		{name: "python REPL reads", need: "python3", command: "python3 -q -i",
			input: "import base64; print(open(base64.b64decode('" + sbB64(s.sshPath) + "').decode()).read())"},
		{name: "python REPL writes outside", need: "python3", command: "python3 -q -i",
			input:  "import base64; open(base64.b64decode('" + sbB64(outsideTarget+"-py") + "').decode(), 'w').write('pwned')",
			target: outsideTarget + "-py"},
		{name: "node REPL reads", need: "node", command: "node -i",
			input: "console.log(require('fs').readFileSync(Buffer.from('" + sbB64(s.awsPath) + "','base64').toString(),'utf8'))"},
		{name: "interactive bash reads", command: "bash --norc --noprofile -i", input: "cat " + sbHide(s.configPath)},
		{name: "is_background reads", command: "sleep 0.2; cat " + sbHide(s.sshPath)},
		{name: "is_background writes outside", command: "sleep 0.2; echo pwned > " + sbHide(outsideTarget+"-bg"), target: outsideTarget + "-bg"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.need != "" {
				sbNeed(t, tc.need)
			}
			var out string
			if tc.input != "" {
				id := stdinTask(t, c, tc.command, "pty")
				stdinPrompted(t, c, id)
				r := c.call(t, "write_stdin", map[string]any{"task_id": id, "input": tc.input, "keys": []string{"enter"}})
				out = sbText(r) + stdinOutput(t, c, id)
			} else {
				r := c.call(t, "run_bash", map[string]any{"command": tc.command, "is_background": true})
				id := sbTaskID(r)
				if id == "" {
					t.Fatalf("no background task: %s", r)
				}
				out = sbText(r) + sbTaskOutput(t, c, id, 10*time.Second)
			}
			leaked(t, result{Text: out}, s.all()...)
			if tc.target != "" {
				if _, err := os.Lstat(tc.target); err == nil {
					t.Errorf("a task wrote %s outside the write set: %q", tc.target, out)
				}
			}
		})
	}
}

// TestSandboxTaskKeepsItsSandbox: under -y, an outside file approved for
// a later call stays closed to a REPL started before: Landlock only
// narrows, so a running task keeps the rules it started with.
func TestSandboxTaskKeepsItsSandbox(t *testing.T) {
	t.Parallel()
	sbNeed(t, "python3")
	e := newEnv(t)
	path := filepath.Join(e.outside, "kept.txt")
	secret := e.secret(path)
	c := e.serve("-y")
	id := stdinTask(t, c, "python3 -q -i", "pty")
	stdinPrompted(t, c, id)
	// An approved call reads it: -y approves what the guard sees.
	allowed(t, sbRun(t, c, "cat "+path, 0), secret)
	r := c.call(t, "write_stdin", map[string]any{"task_id": id, "input": "print(open('" + path + "').read())", "keys": []string{"enter"}})
	out := sbText(r) + stdinOutput(t, c, id)
	if strings.Contains(out, secret) {
		t.Errorf("a task started before the approval read the approved file: %q", out)
	}
}

// TestSandboxKernelEscapes: under -y, the ways around a path wall that
// root has without the sandbox (another mount namespace, a new user
// namespace with its capabilities, a bind mount, /proc's links to the
// root, a hard link) do not reach the private set.
func TestSandboxKernelEscapes(t *testing.T) {
	t.Parallel()
	home := `"$(printenv HOME)"`
	sbReadTable(t, []sbReadCase{
		{name: "a new user namespace", need: []string{"unshare"},
			cmd: func(sbSecrets) string { return "unshare -Ur cat " + home + "/.ssh/id_test" }},
		{name: "a bind mount over the workspace", need: []string{"unshare"},
			cmd: func(sbSecrets) string {
				return "mkdir -p m && unshare -Urm sh -c 'mount --bind \"$(printenv HOME)/.ssh\" m && cat m/id_test'"
			}},
		// The guard asks about /proc/self/root as the root folder, and -y
		// approves it: that approval must not open the private set.
		{name: "proc self root", cmd: func(sbSecrets) string { return "cat /proc/self/root" + home + "/.ssh/id_test" }},
		{name: "proc root of the shell plugin", cmd: func(sbSecrets) string { return "cat /proc/$PPID/root" + home + "/.aws/credentials" }},
		{name: "hard link into the workspace", cmd: func(sbSecrets) string { return "ln " + home + "/.ssh/id_test h; cat h" }},
	})
}
