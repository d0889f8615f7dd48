package install

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/internal/testbuild"
)

// pluginRow is a row of yagent plugins list -o json.
type pluginRow struct {
	Name, Path    string
	Tools         int
	Pinned, Built bool
}

// installLine is the command of the README's Install section: the first
// line of its first sh block.
func installLine(t *testing.T, root string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Install\n")
	if !ok {
		t.Fatal("README.md has no ## Install section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "```sh\n")
	if !ok {
		t.Fatal("README.md's Install section has no sh block")
	}
	line, _, _ := strings.Cut(block, "\n")
	line, _, _ = strings.Cut(line, "#")
	args := strings.Fields(line)
	if len(args) < 2 || args[0] != "go" || args[1] != "install" {
		t.Fatalf("README.md's install line is %q, want a go install", line)
	}
	return args
}

// TestGoInstall runs the README's install line (go install ./cmd/... from
// the module root, with the shared build cache) into an empty GOBIN, then
// the yagent installed there with a home and a workspace of its own: it
// finds the five plugins in its own folder and trusts them though go
// install linked it with no sums, because no command can write that folder,
// and every family's tools are listed. GOBIN is made by testbuild.BinDir,
// outside the temp folders: there, as in a workspace, the host refuses
// plugins nothing vouches for.
func TestGoInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go install")
	}
	root, err := testbuild.Root()
	if err != nil {
		t.Fatal(err)
	}
	args := installLine(t, root)
	gobin, err := testbuild.BinDir("yagent-install-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(gobin) })

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	install := exec.CommandContext(ctx, args[0], args[1:]...)
	install.Dir = root
	install.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("%s: %s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))

	entries, err := os.ReadDir(gobin)
	if err != nil {
		t.Fatal(err)
	}
	var names, want []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want = append(want, "yagent")
	for _, f := range testbuild.Families {
		want = append(want, "yagent-plugin-"+f)
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("GOBIN after %s holds %q, want %q", strings.Join(args, " "), names, want)
	}

	home, ws := t.TempDir(), t.TempDir()
	yagent := func(args ...string) []byte {
		t.Helper()
		cmd := exec.CommandContext(ctx, filepath.Join(gobin, "yagent"), append(args, "--profile", "full", "--workspace", ws)...)
		cmd.Dir = ws
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "YAGENT_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "HOME="+home)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("yagent %s: %v\n%s%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
		}
		if stderr.Len() > 0 {
			t.Errorf("yagent %s warned:\n%s", strings.Join(args, " "), stderr.Bytes())
		}
		return stdout.Bytes()
	}

	var listing struct {
		Tools []struct{ Name, Family string }
	}
	if err := json.Unmarshal(yagent("tools", "--all", "-o", "json"), &listing); err != nil {
		t.Fatal(err)
	}
	byFamily := map[string][]string{}
	for _, tool := range listing.Tools {
		byFamily[tool.Family] = append(byFamily[tool.Family], tool.Name)
	}
	for family, tool := range map[string]string{
		"fs": "read_file", "shell": "run_bash", "search": "grep", "browser": "browser_navigate", "cognitive": "think",
	} {
		if !slices.Contains(byFamily[family], tool) {
			t.Errorf("yagent tools --all lists %q for the %s family, want %s among them", byFamily[family], family, tool)
		}
	}

	var plugins []pluginRow
	if err := json.Unmarshal(yagent("plugins", "list", "-o", "json"), &plugins); err != nil {
		t.Fatal(err)
	}
	for _, f := range testbuild.Families {
		i := slices.IndexFunc(plugins, func(p pluginRow) bool { return p.Name == f })
		switch {
		case i < 0:
			t.Errorf("yagent plugins list names no %s plugin: %+v", f, plugins)
		case plugins[i].Path != filepath.Join(gobin, "yagent-plugin-"+f) || plugins[i].Tools == 0:
			t.Errorf("plugin %s: %+v, want the one in GOBIN %s, with its tools", f, plugins[i], gobin)
		case plugins[i].Built || plugins[i].Pinned:
			t.Errorf("plugin %s: %+v; go install links the host with no sums, and nothing was pinned", f, plugins[i])
		}
	}
}
