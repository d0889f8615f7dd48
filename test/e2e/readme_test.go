package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/yagent/yagent/internal/testbuild"
)

// readmeGoBlock returns the first Go block of the README's "Use it from
// Go" section.
func readmeGoBlock(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Use it from Go\n")
	if !ok {
		t.Fatal(`README.md has no "## Use it from Go" section`)
	}
	_, code, ok := strings.Cut(sec, "\n```go\n")
	if !ok {
		t.Fatal("README.md's Go section has no ```go block")
	}
	code, _, ok = strings.Cut(code, "\n```")
	if !ok {
		t.Fatal("README.md's Go block does not end")
	}
	return code + "\n"
}

// The README's Go API example works as written after make build: built as
// a module of its own that requires this one, run in a folder that holds
// bin/plugins, it finds the plugins and reads the workspace's go.mod.
func TestReadme_GoExampleRuns(t *testing.T) {
	t.Parallel()
	mod := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(repoRoot, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	own, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go \S+$`).FindString(string(own))
	gomod := "module example.com/readme\n\n" + goLine + "\n\nrequire github.com/yagent/yagent v0.0.0\n\nreplace github.com/yagent/yagent => " + repoRoot + "\n"
	for name, data := range map[string][]byte{"main.go": []byte(readmeGoBlock(t)), "go.mod": []byte(gomod), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(mod, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prog := filepath.Join(mod, "example")
	// As the README builds it: linked with the sums of the plugins it
	// runs, which bin/plugins in the workspace needs.
	sums, err := testbuild.SumsFlag(pluginsDir)
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-mod=mod", "-ldflags", sums, "-o", prog, ".")
	build.Dir = mod
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the README's Go block does not build: %v\n%s", err, out)
	}

	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module example.com/ws\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(pluginsDir, filepath.Join(ws, "bin", "plugins")); err != nil {
		t.Fatal(err)
	}
	// A project may not add read roots: the host drops the key and warns,
	// and the program must say so.
	if err := os.MkdirAll(filepath.Join(ws, ".yagent"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".yagent", "config.yaml"), []byte("read_paths: [/srv]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(prog)
	run.Dir = ws
	run.Env = append(os.Environ(), "HOME="+t.TempDir(), "YAGENT_PLUGIN_PATH=")
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("the README's Go block fails: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "module example.com/ws") || !regexp.MustCompile(`(?m)^[1-9][0-9]* tools listed$`).MatchString(stdout.String()) {
		t.Fatalf("the README's Go block printed:\n%s\nstderr:\n%s\nwant the tool count and the workspace's go.mod", stdout.String(), stderr.String())
	}
	if !regexp.MustCompile(`(?m)^yagent: .*read_paths`).MatchString(stderr.String()) {
		t.Fatalf("the README's Go block did not print the host's warning about the project's read_paths; stderr:\n%s", stderr.String())
	}
}

// The README links nothing outside the repository: no web address outside
// code, and every relative link names a file of the repository.
func TestReadme_LinksStayInTheRepository(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range readmeLinkProblems(string(b), func(target string) bool {
		_, err := os.Stat(filepath.Join(repoRoot, target))
		return err == nil
	}) {
		t.Errorf("README.md: %s", p)
	}
}

var (
	mdLink   = regexp.MustCompile(`\]\(([^)\s]+)[^)]*\)|^\[[^\]]+\]:\s*(\S+)`)
	webAddr  = regexp.MustCompile(`(?i)\b(https?://|www\.)\S+`)
	inline   = regexp.MustCompile("`[^`]*`")
	outsider = regexp.MustCompile("(^|[\\s(`])\\.\\./[^\\s`]+")
)

// readmeLinkProblems lists what in text links outside the repository:
// links to web addresses, addresses a renderer would link (outside fenced
// and inline code), and relative links or paths above the repository (in
// inline code too), or to files exists denies.
func readmeLinkProblems(text string, exists func(string) bool) []string {
	var out []string
	fenced := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		n := i + 1
		for _, m := range outsider.FindAllString(line, -1) {
			out = append(out, "line "+itoa(n)+": names a path outside the repository: "+strings.TrimSpace(m))
		}
		prose := inline.ReplaceAllString(line, "")
		for _, m := range mdLink.FindAllStringSubmatch(prose, -1) {
			target := m[1] + m[2]
			target, _, _ = strings.Cut(target, "#")
			switch {
			case webAddr.MatchString(target) || strings.Contains(target, ":"):
				out = append(out, "line "+itoa(n)+": links outside the repository: "+target)
			case target != "" && !exists(target):
				out = append(out, "line "+itoa(n)+": links to a file the repository lacks: "+target)
			}
		}
		for _, m := range webAddr.FindAllString(mdLink.ReplaceAllString(prose, ""), -1) {
			out = append(out, "line "+itoa(n)+": a web address: "+m)
		}
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestReadmeLinkProblems(t *testing.T) {
	t.Parallel()
	exists := func(p string) bool { return p == "sdk/README.md" }
	tests := []struct {
		name, text string
		bad        bool
	}{
		{"a web link", "see [the docs](https://example.com/x)", true},
		{"a bare address", "see https://example.com", true},
		{"a www address", "see www.example.com", true},
		{"a reference link", "[docs]: http://example.com", true},
		{"a path above the repository", "See `../shared/DESIGN.md`.", true},
		{"a link to a missing file", "see [x](docs/missing.md)", true},
		{"a link to a file of the repository", "see [the guide](sdk/README.md#testing)", false},
		{"an address in inline code", "add `--allow-origin https://ide.example.com`", false},
		{"an address in a fenced block", "```sh\ncurl http://127.0.0.1:7777/mcp\n```", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := readmeLinkProblems(tt.text, exists)
			if (len(got) > 0) != tt.bad {
				t.Fatalf("readmeLinkProblems(%q) = %q, want problems: %v", tt.text, got, tt.bad)
			}
		})
	}
}
