package hostile

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// resolveServePage serves a page holding marker on a loopback port and
// returns the port; it stops when the test ends.
func resolveServePage(t *testing.T, marker string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><p>%s</p></body></html>", marker, marker)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// resolveAllowHosts writes the user's config granting hosts to the network
// tools without an ask.
func resolveAllowHosts(e *env, hosts ...string) {
	e.t.Helper()
	e.write(filepath.Join(e.home, ".yagent", "config.yaml"), "network:\n  allow: ["+strings.Join(hosts, ", ")+"]\n")
}

// TestOneResolution: the host resolves each role argument once, judges
// that value and sends it; no plugin reads a different file or URL than the
// one the guard judged, and a plugin process has no working folder of
// interest to read from. Every case was red on the code before this rule.
func TestOneResolution(t *testing.T) {
	t.Parallel()
	type check func(t *testing.T, e *env)
	// mcp runs one call over `yagent serve` (no answerer, no -y) and
	// demands that no secret shows; extra checks the result further.
	mcp := func(tool string, args func(e *env) map[string]any, setup func(e *env) []string, extra func(t *testing.T, e *env, r result)) check {
		return func(t *testing.T, e *env) {
			secrets := setup(e)
			r := e.serve().call(t, tool, args(e))
			leaked(t, r, secrets...)
			if extra != nil {
				extra(t, e, r)
			}
		}
	}
	secretFile := func(e *env) []string { return []string{e.secret("notes.txt")} }
	// A secret in a file's name, for tools that list names.
	secretName := func(e *env) []string {
		m := "SECRET-name-" + filepath.Base(e.root)
		e.write(filepath.Join(e.outside, m+".txt"), "x\n")
		return []string{m}
	}
	// ws/link leads outside: judged as "link" it asks, so the plugin must
	// never be handed "link" for "link  " or " link".
	linkOut := func(e *env) []string {
		s := e.secret("notes.txt")
		e.symlink(e.outside, "link")
		return []string{s}
	}
	notRun := func(t *testing.T, _ *env, r result) {
		if r.Code == "" {
			t.Errorf("want the call to fail (no such file in the workspace) or ask, got %s", r)
		}
	}
	cases := []struct {
		name string
		run  check
	}{
		{"grep: leading space before an absolute path outside", mcp("grep",
			func(e *env) map[string]any { return map[string]any{"pattern": "SECRET", "path": " " + e.outside} }, secretFile, notRun)},
		{"grep: leading tab before an absolute path outside", mcp("grep",
			func(e *env) map[string]any { return map[string]any{"pattern": "SECRET", "path": "\t" + e.outside} }, secretFile, notRun)},
		{"grep: leading newline before an absolute path outside", mcp("grep",
			func(e *env) map[string]any { return map[string]any{"pattern": "SECRET", "path": "\n" + e.outside} }, secretFile, notRun)},
		{"grep: trailing spaces after a symlink leading out", mcp("grep",
			func(*env) map[string]any { return map[string]any{"pattern": "SECRET", "path": "link  "} }, linkOut, notRun)},
		{"grep: leading space before a symlink leading out", mcp("grep",
			func(*env) map[string]any { return map[string]any{"pattern": "SECRET", "path": " link"} }, linkOut, notRun)},
		{"search_files: leading space before an absolute path outside", mcp("search_files",
			func(e *env) map[string]any { return map[string]any{"pattern": "*.txt", "path": " " + e.outside} }, secretName, notRun)},
		{"search_files: spaces around a symlink leading out", mcp("search_files",
			func(*env) map[string]any { return map[string]any{"pattern": "*", "path": " link "} },
			func(e *env) []string { s := secretName(e); e.symlink(e.outside, "link"); return s }, notRun)},
		{"search_files: leading space before ~/", mcp("search_files",
			func(*env) map[string]any { return map[string]any{"pattern": "*.txt", "path": " ~/"} },
			func(e *env) []string {
				m := "SECRET-home-" + filepath.Base(e.root)
				e.write(filepath.Join(e.home, m+".txt"), "x\n")
				return []string{m}
			}, notRun)},
		{"code_outline: leading space before an absolute file outside", mcp("code_outline",
			func(e *env) map[string]any { return map[string]any{"path": " " + filepath.Join(e.outside, "x.go")} },
			func(e *env) []string {
				m := "SECRET_func_" + strings.ReplaceAll(filepath.Base(e.root), "-", "_")
				e.write(filepath.Join(e.outside, "x.go"), "package x\n\nfunc "+m+"() {}\n")
				return []string{m}
			}, notRun)},
		{"custom plugin: relative path read from the workspace, not the cwd", func(t *testing.T, e *env) {
			secret := e.secret("a.txt")
			e.write("a.txt", "workspace words here\n")
			e.pin("naive")
			out, err := e.cli(e.outside, "call", "word_count", `{"path":"a.txt"}`)
			if strings.Contains(out, secret) {
				t.Fatalf("word_count read the cwd's a.txt: %s", out)
			}
			if err != nil || !strings.Contains(out, "workspace words here") {
				t.Errorf("word_count a.txt from another cwd: %v\n%s\nwant the workspace's a.txt", err, out)
			}
		}},
		{"custom plugin: relative subfolder path from the home folder", func(t *testing.T, e *env) {
			secret := e.secret(filepath.Join(e.home, "notes", "todo.txt"))
			e.write("notes/todo.txt", "the workspace todo\n")
			e.pin("naive")
			out, err := e.cli(e.home, "call", "word_count", `{"path":"notes/todo.txt"}`)
			if strings.Contains(out, secret) {
				t.Fatalf("word_count read the cwd's notes/todo.txt: %s", out)
			}
			if err != nil || !strings.Contains(out, "the workspace todo") {
				t.Errorf("word_count notes/todo.txt from the home folder: %v\n%s", err, out)
			}
		}},
		{"custom plugin: its working folder is private and empty", func(t *testing.T, e *env) {
			e.write("a.txt", "x\n")
			e.pin("naive")
			r := e.serve().call(t, "naive_cwd", map[string]any{})
			var got struct {
				Cwd     string `json:"cwd"`
				Entries int    `json:"entries"`
			}
			if err := json.Unmarshal(r.Data, &got); err != nil && r.Code == "" {
				t.Fatalf("naive_cwd data %s: %v", r.Data, err)
			}
			if r.Code == "" && (got.Cwd == e.workspace || got.Entries != 0) {
				t.Errorf("naive_cwd = %+v: the plugin runs in the workspace or a folder with files; want a private empty folder", got)
			}
			if r.Code == "" && got.Cwd != "" {
				if fi, err := os.Stat(got.Cwd); err == nil && fi.Mode().Perm() != 0o700 {
					t.Errorf("the plugin's folder %s has mode %o, want 0700", got.Cwd, fi.Mode().Perm())
				}
			}
		}},
		{"web_fetch: bare localhost:port judged as http://localhost:port", func(t *testing.T, e *env) {
			marker := "PAGE-" + filepath.Base(e.root)
			port := resolveServePage(t, marker)
			resolveAllowHosts(e, "localhost")
			allowed(t, e.serve().call(t, "web_fetch", map[string]any{"url": "localhost:" + port}), marker)
		}},
		{"web_fetch: bare loopback address with a path", func(t *testing.T, e *env) {
			marker := "PAGE-" + filepath.Base(e.root)
			port := resolveServePage(t, marker)
			resolveAllowHosts(e, "127.0.0.1")
			allowed(t, e.serve().call(t, "web_fetch", map[string]any{"url": "127.0.0.1:" + port + "/page"}), marker)
		}},
		{"browser_navigate: bare localhost:port is not asked as a strange scheme", func(t *testing.T, e *env) {
			marker := "PAGE-" + filepath.Base(e.root)
			port := resolveServePage(t, marker)
			resolveAllowHosts(e, "localhost")
			r := e.serve("--profile", "browser").call(t, "browser_navigate", map[string]any{"url": "localhost:" + port})
			if r.Code == "needs_auth" || r.Code == "denied" {
				t.Errorf("browser_navigate localhost:%s asked: %s", port, r)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newEnv(t))
		})
	}
}
