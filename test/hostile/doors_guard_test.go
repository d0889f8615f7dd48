package hostile

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// doorsConfig writes the user's config: body is YAML, one key a line.
func doorsConfig(e *env, body ...string) {
	e.t.Helper()
	e.write(filepath.Join(e.home, ".yagent", "config.yaml"), strings.Join(body, "\n")+"\n")
}

// doorsRules is the exec key of a config holding rules (YAML flow maps).
func doorsRules(rules ...string) string {
	s := "exec:\n  rules:"
	for _, r := range rules {
		s += "\n    - " + r
	}
	return s
}

// doorsNoBrowser is the key of a config whose browser plugin finds no
// Chromium, so that no navigation can leave this machine whatever the
// guard lets through: for the targets that must never get a packet.
const doorsNoBrowser = "plugins:\n  browser:\n    chromium: /nonexistent/chromium"

// doorsBrowserRan reports whether r came from a browser that started,
// skipping t where none is usable here.
func doorsBrowserRan(t *testing.T, r result) {
	t.Helper()
	if r.Code != "" && r.Code != "needs_auth" && r.Code != "denied" {
		t.Skipf("no usable browser here: %s", r)
	}
}

// TestDoorsBrowserNavigation: with the full profile and nobody to ask,
// the browser opens no host of this machine or its networks, in any
// spelling, through browser_navigate or a new tab, the network of
// commands off or not; web_fetch asks alike. Loopback targets are served
// here and a browser reaching them would show the page's marker; private
// and link-local targets get a browser that cannot start, so that no
// packet is sent whatever the guard decides. The subtests run one after
// the other: each starts a browser. Red on the code before the browser's
// URLs were judged like web_fetch's.
func TestDoorsBrowserNavigation(t *testing.T) {
	t.Parallel()
	marker := "DOORS-PAGE-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	port := resolveServePage(t, marker)
	loopback := []string{
		"http://127.0.0.1:" + port + "/",
		"http://localhost:" + port + "/",
		"http://LOCALHOST.:" + port + "/",
		"http://[::1]:" + port + "/",
		"http://[::ffff:127.0.0.1]:" + port + "/",
		"http://0x7f.1:" + port + "/",
		"http://2130706433:" + port + "/",
		"http://0177.0.0.1:" + port + "/",
		"http://127.1:" + port + "/",
		"localhost:" + port,
	}
	for _, network := range []string{"on", "off"} {
		t.Run("loopback, sandbox network "+network, func(t *testing.T) {
			e := newEnv(t)
			doorsConfig(e, "sandbox: {network: "+network+"}")
			c := e.serve("--profile", "full")
			for _, u := range loopback {
				blocked(t, c.call(t, "browser_navigate", map[string]any{"url": u}), marker)
				blocked(t, c.call(t, "browser_tabs", map[string]any{"action": "new", "url": u}), marker)
				blocked(t, c.call(t, "web_fetch", map[string]any{"url": u}), marker)
			}
		})
	}
	t.Run("private and link-local, no browser", func(t *testing.T) {
		e := newEnv(t)
		doorsConfig(e, doorsNoBrowser, "network:\n  allow: [\"*\", \"*.*\"]")
		c := e.serve("--profile", "full")
		for _, u := range []string{
			"http://10.0.0.1/", "http://10.255.1.2:8080/x", "http://172.16.0.1/", "http://192.168.1.1/",
			"http://169.254.169.254/latest/meta-data/", "http://[fe80::1]/", "http://[fd00::1]/",
			"http://0xa9fea9fe/", "http://[::ffff:169.254.169.254]/", "http://0.0.0.0:" + port + "/",
		} {
			blocked(t, c.call(t, "browser_navigate", map[string]any{"url": u}))
			blocked(t, c.call(t, "browser_tabs", map[string]any{"action": "new", "url": u}))
		}
	})
	t.Run("a glob grants no loopback host", func(t *testing.T) {
		e := newEnv(t)
		doorsConfig(e, "network:\n  allow: [\"*\", \"*.*\", \"*.localhost\"]")
		c := e.serve("--profile", "full")
		for _, u := range loopback[:3] {
			blocked(t, c.call(t, "browser_navigate", map[string]any{"url": u}), marker)
			blocked(t, c.call(t, "web_fetch", map[string]any{"url": u}), marker)
		}
	})
}

// TestDoorsBrowserGranted: what the profile grants, or -y approves, the
// browser still opens, and web_fetch still fetches.
func TestDoorsBrowserGranted(t *testing.T) {
	t.Parallel()
	marker := "DOORS-GRANTED-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	port := resolveServePage(t, marker)
	t.Run("network.allow names the host", func(t *testing.T) {
		e := newEnv(t)
		doorsConfig(e, "network:\n  allow: [127.0.0.1, localhost]")
		c := e.serve("--profile", "full")
		allowed(t, c.call(t, "web_fetch", map[string]any{"url": "http://127.0.0.1:" + port + "/"}), marker)
		r := c.call(t, "browser_navigate", map[string]any{"url": "http://127.0.0.1:" + port + "/"})
		doorsBrowserRan(t, r)
		allowed(t, r, marker)
		allowed(t, c.call(t, "browser_navigate", map[string]any{"url": "localhost:" + port}), marker)
		allowed(t, c.call(t, "browser_tabs", map[string]any{"action": "new", "url": "http://localhost:" + port + "/"}), marker)
	})
	t.Run("-y approves a loopback host", func(t *testing.T) {
		e := newEnv(t)
		c := e.serve("--profile", "full", "-y")
		r := c.call(t, "browser_navigate", map[string]any{"url": "http://127.0.0.1:" + port + "/"})
		doorsBrowserRan(t, r)
		allowed(t, r, marker)
		allowed(t, c.call(t, "web_fetch", map[string]any{"url": "http://localhost:" + port + "/"}), marker)
	})
}

// TestDoorsExecOptionPrefixes: under -y, with deny rules on rm -rf, git
// push --force and curl --upload-file, no abbreviation of their long
// options gets through, as GNU getopt, git's and curl's parsers read them
// (any unambiguous prefix, down to one letter); an ambiguous option, or
// one the program's table does not know, is denied under such a rule.
// Red on the code before: rm --r --f, --re --fo and -r --f removed the
// folder, curl --up uploaded the file.
func TestDoorsExecOptionPrefixes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("src.txt", "upload\n")
	e.write("gone.txt", "x\n")
	cases := []struct {
		name, cmd string
		victim    string // a workspace folder that must stay
		absent    string // a workspace file that must not appear
	}{
		{name: "rm --r --f", cmd: "rm --r --f v1", victim: "v1"},
		{name: "rm --re --fo", cmd: "rm --re --fo v2", victim: "v2"},
		{name: "rm -r --f", cmd: "rm -r --f v3", victim: "v3"},
		{name: "rm --recursive --force", cmd: "rm --recursive --force v4", victim: "v4"},
		{name: "rm --f --recu", cmd: "rm --f --recu v5", victim: "v5"},
		{name: "rm --no-preserve-root --r -f", cmd: "rm --no-preserve-root --r -f v6", victim: "v6"},
		{name: "rm --no-pres -r --f", cmd: "rm --no-pres -r --f v7", victim: "v7"},
		{name: "rm -r with an option rm does not know", cmd: "rm -r --frobnicate v8", victim: "v8"},
		{name: "rm -f with an ambiguous option", cmd: "rm -f --ver v9", victim: "v9"},
		{name: "git push --forc", cmd: "git push --forc origin HEAD"},
		{name: "git push --fo", cmd: "git push --fo origin HEAD"},
		{name: "git push --f", cmd: "git -C . push --f origin HEAD"},
		{name: "curl --up", cmd: "curl -s --up src.txt file://" + e.ws("up1"), absent: "up1"},
		{name: "curl --upl", cmd: "curl -s --upl src.txt file://" + e.ws("up2"), absent: "up2"},
		{name: "curl --upload-f=", cmd: "curl -s --upload-f=src.txt file://" + e.ws("up3"), absent: "up3"},
		{name: "curl with an option curl does not know", cmd: "curl -s --uploadd src.txt file://" + e.ws("up4"), absent: "up4"},
	}
	for _, tc := range cases {
		if tc.victim != "" {
			e.write(filepath.Join(tc.victim, "keep.txt"), "keep\n")
		}
	}
	doorsConfig(e, doorsRules("{action: deny, program: rm, args: [-rf]}",
		"{action: deny, program: git, args: [push, --force]}", "{action: deny, program: curl, args: [--upload-file]}"))
	c := e.serve("-y")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			denied(t, c.call(t, "run_bash", map[string]any{"command": tc.cmd, "timeout_ms": 10000}))
			if tc.victim != "" {
				if _, err := os.Stat(e.ws(filepath.Join(tc.victim, "keep.txt"))); err != nil {
					t.Errorf("the command removed %s: %v", tc.victim, err)
				}
			}
			if tc.absent != "" {
				if _, err := os.Stat(e.ws(tc.absent)); err == nil {
					t.Errorf("the command wrote %s", tc.absent)
				}
			}
		})
	}
	// What the rules do not name still runs.
	allowed(t, c.call(t, "run_bash", map[string]any{"command": "rm gone.txt && echo removed-one-file"}), "removed-one-file")
	allowed(t, c.call(t, "run_bash", map[string]any{"command": "mkdir d && rm --dir d && echo removed-empty-dir"}), "removed-empty-dir")
}

// TestDoorsExecRuntimeArguments: with the exec supervisor on (the
// sandbox on, exec rules in force), an argument only known when the
// command runs no longer denies it under {deny rm -rf}: a temporary folder
// made and removed by the same command runs, and the execve of rm is
// judged with its real arguments, so a folder a rule protects still
// stays. With the sandbox off, the guard's parse-time check is alone and
// stays conservative. Red on the code before: the mktemp command was
// denied.
func TestDoorsExecRuntimeArguments(t *testing.T) {
	t.Parallel()
	rules := doorsRules("{action: deny, program: rm, args: [-rf]}", "{action: deny, program: rm, args: [-r, keep]}")
	mktemp := `d=$(mktemp -d); touch "$d/f"; rm -r $d; test -e "$d" || echo "gone:$d"`
	t.Run("sandbox on", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		for _, v := range []string{"keep", "v1", "v2"} {
			e.write(filepath.Join(v, "keep.txt"), "keep\n")
		}
		doorsConfig(e, rules)
		for _, flags := range [][]string{nil, {"-y"}} {
			c := e.serve(flags...)
			allowed(t, c.call(t, "run_bash", map[string]any{"command": mktemp, "timeout_ms": 20000}), "gone:")
		}
		c := e.serve("-y")
		for _, cmd := range []string{
			`d=$(echo keep); rm -r $d`,
			`o=$(printf %s -rf); rm $o v1`,
			`set -- -r -f v2; rm "$@"`,
		} {
			r := c.call(t, "run_bash", map[string]any{"command": cmd, "timeout_ms": 20000})
			for _, v := range []string{"keep", "v1", "v2"} {
				if _, err := os.Stat(e.ws(filepath.Join(v, "keep.txt"))); err != nil {
					t.Fatalf("%q removed %s: %v (%s)", cmd, v, err, r)
				}
			}
			if r.Code == "" && !strings.Contains(sbText(r), "refused") {
				t.Errorf("%q ran and its output does not say rm's exec was refused: %s", cmd, r)
			}
		}
	})
	t.Run("sandbox off", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		doorsConfig(e, rules)
		denied(t, e.serve("-y", "--sandbox", "off").call(t, "run_bash", map[string]any{"command": mktemp}))
	})
}

// TestDoorsTokenFromEnvironment: serve --http reads its token from
// $YAGENT_TOKEN and removes it from its environment, but the environment
// it started with stays in /proc/PID/environ, which any process of the
// user (a command run with the sandbox off among them) may read; serve
// says so in one line at start. --token-file leaves nothing there and no
// warning.
func TestDoorsTokenFromEnvironment(t *testing.T) {
	t.Parallel()
	token := "doors-token-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	start := func(t *testing.T, e *env, env []string, flags ...string) (lines []string, environ string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, yagent, append([]string{"serve", "--http", "127.0.0.1:0"}, e.args(flags...)...)...)
		cmd.Env = append(e.environ(), env...)
		cmd.Dir = e.workspace
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if strings.Contains(sc.Text(), "serving MCP over HTTP") {
				b, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/environ")
				return lines, string(b)
			}
		}
		t.Fatalf("serve --http ended before serving: %s", strings.Join(lines, "\n"))
		return nil, ""
	}
	warns := func(lines []string) bool {
		for _, l := range lines {
			if strings.Contains(l, "YAGENT_TOKEN") && strings.Contains(l, "--token-file") && strings.Contains(l, "environ") {
				return true
			}
		}
		return false
	}
	t.Run("YAGENT_TOKEN", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		lines, environ := start(t, e, []string{"YAGENT_TOKEN=" + token})
		if !strings.Contains(environ, token) {
			t.Logf("this system does not show the starting environment in /proc/PID/environ")
		}
		if !warns(lines) {
			t.Errorf("serve --http with $YAGENT_TOKEN gave no warning naming /proc/PID/environ and --token-file:\n%s", strings.Join(lines, "\n"))
		}
	})
	t.Run("--token-file", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		file := e.write(filepath.Join(e.home, "token"), token+"\n")
		lines, environ := start(t, e, nil, "--token-file", file)
		if strings.Contains(environ, token) {
			t.Errorf("the token from --token-file is in serve's /proc/PID/environ")
		}
		if warns(lines) {
			t.Errorf("serve --http --token-file warned about the environment:\n%s", strings.Join(lines, "\n"))
		}
	})
}
