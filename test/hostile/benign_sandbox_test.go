package hostile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sbCallLong is client.call with a longer deadline, for builds that fill
// a cold cache.
func sbCallLong(t *testing.T, c *client, command string, limit time.Duration) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit+30*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "run_bash", Arguments: map[string]any{
		"command": command, "timeout_ms": int(limit / time.Millisecond), "yield_time_ms": int(limit / time.Millisecond),
	}})
	if err != nil {
		t.Fatalf("run_bash %q: %v\nstderr:\n%s", command, err, c.stderr.String())
	}
	var r result
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			r.Text += tc.Text
		}
	}
	if m, ok := res.StructuredContent.(map[string]any); ok {
		r.Code, _ = m["code"].(string)
	}
	if res.IsError && r.Code == "" {
		r.Code = "error"
	}
	return r
}

// sbGoMain is a main package and its test, for the go cases.
func sbGoMain(e *env, imports, body string) {
	e.write("main.go", "package main\n\nimport (\n\t\"fmt\"\n"+imports+")\n\nfunc main() { fmt.Println("+body+") }\n")
	e.write("main_test.go", "package main\n\nimport \"testing\"\n\nfunc TestRun(t *testing.T) { main() }\n")
}

// TestSandboxOrdinaryWork: everyday development runs under the sandbox
// as before, in the workspace, with the toolchain caches under the home
// folder, /tmp and $TMPDIR.
func TestSandboxOrdinaryWork(t *testing.T) {
	t.Parallel()
	type step struct {
		cmd   string
		wants []string
		slow  bool // a build: a long deadline
	}
	cases := []struct {
		name  string
		need  []string
		flags []string
		setup func(t *testing.T, e *env)
		steps []step
	}{
		{
			name: "go build and go test, default caches under the home", need: []string{"go"},
			setup: func(t *testing.T, e *env) { sbGoMain(e, "", `"hello from the build"`) },
			steps: []step{
				{cmd: "go mod init example.com/hello && go build -o hello . && ./hello", wants: []string{"hello from the build"}, slow: true},
				{cmd: "go test ./...", wants: []string{"ok"}, slow: true},
			},
		},
		{
			name: "go build with cold caches fills the module cache from the proxy", need: []string{"go"},
			setup: func(t *testing.T, e *env) {
				e.extraEnv = append(e.extraEnv,
					"GOCACHE="+filepath.Join(e.home, ".cache", "cold-build"),
					"GOMODCACHE="+filepath.Join(e.home, ".cache", "cold-mod"))
				e.write("go.mod", "module example.com/cold\n\ngo 1.22\n\nrequire github.com/google/uuid v1.6.0\n")
				e.write("go.sum", "github.com/google/uuid v1.6.0 h1:NIvaJDMOsjHA8n1jAhLSgzrAzy1Hgr+hNrb57e+94F0=\n"+
					"github.com/google/uuid v1.6.0/go.mod h1:TIyPZe4MgqvfeYDBFedMoGGpEw/LqOeaOT+nhxU+yHo=\n")
				sbGoMain(e, "\t\"github.com/google/uuid\"\n", `"nil uuid", uuid.Nil`)
			},
			steps: []step{
				{cmd: "go build -o cold . && ./cold", wants: []string{"nil uuid 00000000-0000-0000-0000-000000000000"}, slow: true},
				{cmd: "go test ./...", wants: []string{"ok"}, slow: true},
			},
		},
		{
			name: "git init, add, commit", need: []string{"git"},
			setup: func(t *testing.T, e *env) { e.write("a.txt", "first file\n") },
			steps: []step{{
				cmd:   "git init -q && git add a.txt && git -c user.name=t -c user.email=t@example.com commit -qm 'first commit' && git log --oneline",
				wants: []string{"first commit"},
			}},
		},
		{
			name: "git commit with the identity of ~/.gitconfig", need: []string{"git"},
			setup: func(t *testing.T, e *env) {
				e.write(filepath.Join(e.home, ".gitconfig"), "[user]\n\tname = Home Config\n\temail = home@example.com\n")
				e.write("a.txt", "first file\n")
			},
			steps: []step{{
				cmd:   "git init -q && git add a.txt && git commit -qm second && git log --format='%an %s'",
				wants: []string{"Home Config second"},
			}},
		},
		{
			name: "make", need: []string{"make"},
			setup: func(t *testing.T, e *env) {
				e.write("Makefile", "all: out.txt\n\t@cat out.txt\n\nout.txt:\n\t@echo built by make > out.txt\n")
			},
			steps: []step{{cmd: "make", wants: []string{"built by make"}}},
		},
		{
			name: "a python3 script writes a workspace file", need: []string{"python3"},
			setup: func(t *testing.T, e *env) { e.write("s.py", "open('out.txt', 'w').write('written by python\\n')\n") },
			steps: []step{{cmd: "python3 s.py && cat out.txt", wants: []string{"written by python"}}},
		},
		{
			name: "npm init, a script, a local package, the cache", need: []string{"npm", "node"},
			setup: func(t *testing.T, e *env) {
				e.write("dep/package.json", `{"name":"dep","version":"1.0.0","main":"index.js"}`+"\n")
				e.write("dep/index.js", "module.exports = 'local package loaded'\n")
			},
			steps: []step{
				{cmd: `npm init -y >/dev/null && npm pkg set scripts.hi="echo hi from npm" && npm run --silent hi`, wants: []string{"hi from npm"}},
				{cmd: "npm install --no-audit --no-fund ./dep >/dev/null && node -e \"console.log(require('dep'))\"", wants: []string{"local package loaded"}},
				{cmd: "npm config get cache && npm cache verify", wants: []string{".npm", "Cache verified"}},
			},
		},
		{name: "cat /etc/os-release", steps: []step{{cmd: "cat /etc/os-release", wants: []string{"ID="}}}},
		{name: "ls /usr/bin", steps: []step{{cmd: "ls /usr/bin | head -50 | wc -l", wants: []string{"50"}}}},
		{name: "a file in /tmp", steps: []step{{cmd: "f=$(mktemp /tmp/yagent-benign-XXXXXX) && echo hi from tmp > $f && cat $f && rm $f", wants: []string{"hi from tmp"}}}},
		{name: "a file in TMPDIR", steps: []step{{cmd: `echo hi from tmpdir > "$TMPDIR/y" && cat "$TMPDIR/y"`, wants: []string{"hi from tmpdir"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sbNeed(t, tc.need...)
			e := newEnv(t)
			if tc.setup != nil {
				tc.setup(t, e)
			}
			c := e.serve(tc.flags...)
			for _, s := range tc.steps {
				var r result
				if s.slow {
					r = sbCallLong(t, c, s.cmd, 300*time.Second)
				} else {
					r = sbRun(t, c, s.cmd, 0)
				}
				allowed(t, r, s.wants...)
				if strings.Contains(r.Text, "(exit code") {
					t.Errorf("%q failed: %s", s.cmd, r)
				}
			}
		})
	}
}

// TestSandboxLeftBehind: a process a command leaves running (nohup ... &)
// outlives the call that started it: once a call has returned, its
// processes are never killed for it.
func TestSandboxLeftBehind(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.serve()
	r := sbRun(t, c, "nohup sh -c 'echo $$ > left.pid; exec sleep 301' >/dev/null 2>&1 & echo left behind", 0)
	allowed(t, r, "left behind")
	pid, ok := sbPid(e.ws("left.pid"), 5*time.Second)
	if !ok {
		t.Fatalf("the process left behind wrote no pid: %s", r)
	}
	t.Cleanup(func() { sbKill(pid, "sleep 301") })
	// Another call ends first, so the first call's clean-up has run.
	allowed(t, sbRun(t, c, "echo next", 0), "next")
	if !sbAlive(pid, "sleep 301") {
		t.Errorf("the process left behind by a returned call was killed")
	}
	if _, err := os.Stat(e.ws("left.pid")); err != nil {
		t.Error(err)
	}
}

// TestSandboxBackgroundLivesOn: an is_background command keeps running
// after its call returned, and shell_tasks lists it.
func TestSandboxBackgroundLivesOn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.serve()
	r := c.call(t, "run_bash", map[string]any{"command": "sh -c 'echo $$ > bg.pid; exec sleep 302'", "is_background": true})
	id := sbTaskID(r)
	if r.Code != "" || id == "" {
		t.Fatalf("no background task: %s", r)
	}
	pid, ok := sbPid(e.ws("bg.pid"), 5*time.Second)
	if !ok {
		t.Fatalf("the background command wrote no pid: %s", r)
	}
	t.Cleanup(func() { sbKill(pid, "sleep 302") })
	allowed(t, sbRun(t, c, "echo next", 0), "next")
	if !sbAlive(pid, "sleep 302") {
		t.Errorf("the background command was killed when its call returned")
	}
	allowed(t, c.call(t, "shell_tasks", map[string]any{}), id)
}
