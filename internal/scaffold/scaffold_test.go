package scaffold

import (
	"bytes"
	"errors"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"

	"github.com/yagent/yagent/internal/testbuild"
)

// variants are the three ways a module is written: against a checkout,
// requiring a release, requiring nothing yet.
func variants(t *testing.T) map[string]Options {
	t.Helper()
	root, err := testbuild.Root()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Options{
		"checkout": {Name: "demo-x", GoVersion: "1.26.8", Checkout: root},
		"release":  {Name: "demo", Module: "example.org/team/demo", GoVersion: "1.26.8", Require: "v1.2.3"},
		"devel":    {Name: "demo", GoVersion: "1.26.8"},
	}
}

// Every file renders; the Go files are gofmt's output and parse, go.mod
// and go.work are what the go command reads, and each names what it must.
func TestRender(t *testing.T) {
	t.Parallel()
	for name, o := range variants(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			names, files, err := Render(t.TempDir(), o)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"go.mod", "main.go", "count_words.go", "count_words_test.go", "Makefile", "README.md", ".gitignore"}
			if o.Checkout != "" {
				want = append(want[:1], append([]string{"go.work"}, want[1:]...)...)
			}
			if strings.Join(names, " ") != strings.Join(want, " ") {
				t.Fatalf("files = %v, want %v", names, want)
			}
			for _, n := range names {
				b := files[n]
				if len(b) == 0 || b[len(b)-1] != '\n' || bytes.Contains(b, []byte("{{")) || bytes.Contains(b, []byte("<no value>")) {
					t.Errorf("%s is not rendered whole:\n%s", n, b)
				}
				if strings.HasSuffix(n, ".go") {
					formatted, err := format.Source(b)
					if err != nil {
						t.Errorf("%s does not parse: %v\n%s", n, err, b)
					} else if !bytes.Equal(formatted, b) {
						t.Errorf("%s is not gofmt's output; gofmt writes:\n%s", n, formatted)
					}
				}
			}
			mod, err := modfile.Parse("go.mod", files["go.mod"], nil)
			if err != nil {
				t.Fatalf("go.mod: %v\n%s", err, files["go.mod"])
			}
			wantMod := o.Module
			if wantMod == "" {
				wantMod = "example.com/yagent-plugin-" + o.Name
			}
			if mod.Module.Mod.Path != wantMod || mod.Go.Version != o.GoVersion {
				t.Errorf("go.mod: module %s, go %s; want %s, go %s", mod.Module.Mod.Path, mod.Go.Version, wantMod, o.GoVersion)
			}
			var req []string
			for _, r := range mod.Require {
				req = append(req, r.Mod.String())
			}
			switch {
			case o.Checkout != "" || o.Require == "":
				if len(req) != 0 {
					t.Errorf("go.mod requires %v, want nothing", req)
				}
			case strings.Join(req, " ") != Module+"@"+o.Require:
				t.Errorf("go.mod requires %v, want %s@%s", req, Module, o.Require)
			}
			if o.Checkout != "" {
				work, err := modfile.ParseWork("go.work", files["go.work"], nil)
				if err != nil {
					t.Fatalf("go.work: %v\n%s", err, files["go.work"])
				}
				if len(work.Use) != 2 || work.Use[0].Path != "." || work.Use[1].Path != o.Checkout {
					t.Errorf("go.work uses %+v, want . and %s", work.Use, o.Checkout)
				}
			}
			for _, s := range []string{`Name: "` + o.Name + `"`, `"` + ToolName(o.Name) + `"`} {
				if !bytes.Contains(files["main.go"], []byte(s)) && !bytes.Contains(files["count_words.go"], []byte(s)) {
					t.Errorf("neither main.go nor count_words.go holds %s", s)
				}
			}
			if mk := string(files["Makefile"]); !strings.Contains(mk, "\n\t$(GO) build -o \"$(YAGENT_PLUGIN_DIR)/$(BINARY)\" .\n") ||
				!strings.Contains(mk, "BINARY            := yagent-plugin-"+o.Name+"\n") || !strings.Contains(mk, "yagent plugins pin $(NAME)") {
				t.Errorf("the Makefile does not install yagent-plugin-%s and say to pin it:\n%s", o.Name, mk)
			}
		})
	}
}

func TestToolName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{"demo": "demo_count_words", "my-team_x": "my_team_x_count_words"} {
		if got := ToolName(name); got != want {
			t.Errorf("ToolName(%q) = %q, want %q", name, got, want)
		}
	}
}

// A folder that holds anything is refused and left as it was; a missing or
// empty one is written.
func TestWrite_RefusesNonEmptyFolder(t *testing.T) {
	t.Parallel()
	o := Options{Name: "demo", GoVersion: "1.26.8"}

	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "notes.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(full, o); !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("Write into a folder holding notes.txt: %v, want ErrNotEmpty naming notes.txt", err)
	}
	hidden := t.TempDir()
	if err := os.Mkdir(filepath.Join(hidden, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(hidden, o); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("Write into a folder holding .git: %v, want ErrNotEmpty", err)
	}
	for _, dir := range []string{full, hidden} {
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("%s holds %d entries after a refused Write, want its 1", dir, len(entries))
		}
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(file, o); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("Write into a file: %v, want refused", err)
	}

	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "a", "b")} {
		names, err := Write(dir, o)
		if err != nil {
			t.Fatalf("Write(%s): %v", dir, err)
		}
		for _, n := range names {
			if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
				t.Errorf("Write(%s) reported %s: %v", dir, n, err)
			}
		}
	}
}

// A checkout is found from a folder inside it, named in go.work relative
// to the module it holds and absolute to one outside it; a go.mod of
// another module is not one.
func TestFindCheckout(t *testing.T) {
	t.Parallel()
	tree := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(tree, "go.mod"), "module "+Module+"\n\ngo 1.26.8\n")
	write(filepath.Join(tree, "plugins", "other", "go.mod"), "module example.com/other\n\ngo 1.25\n")
	write(filepath.Join(t.TempDir(), "go.mod"), "module example.com/other\n")

	for _, from := range []string{tree, filepath.Join(tree, "plugins", "other"), filepath.Join(tree, "plugins", "other", "new")} {
		if root, v := FindCheckout(from); root != tree || v != "1.26.8" {
			t.Errorf("FindCheckout(%s) = %q, %q; want %s, 1.26.8", from, root, v, tree)
		}
	}
	if root, _ := FindCheckout(t.TempDir()); root != "" {
		t.Errorf("FindCheckout of a temp folder = %q, want none", root)
	}
	other := t.TempDir()
	write(filepath.Join(other, "go.mod"), "module example.com/other\n")
	if _, err := Checkout(other); err == nil || !strings.Contains(err.Error(), "module example.com/other, not "+Module) {
		t.Errorf("Checkout of another module: %v", err)
	}

	_, files, err := Render(filepath.Join(tree, "plugins", "demo"), Options{Name: "demo", GoVersion: "1.26.8", Checkout: tree})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(files["go.work"], []byte("\n\t.\n\t../..\n")) {
		t.Errorf("go.work of a module inside the checkout does not use ../..:\n%s", files["go.work"])
	}
	outside := t.TempDir()
	_, files, err = Render(outside, Options{Name: "demo", GoVersion: "1.26.8", Checkout: tree})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(files["go.work"], []byte("\n\t"+filepath.ToSlash(tree)+"\n")) {
		t.Errorf("go.work of a module outside the checkout does not use %s:\n%s", tree, files["go.work"])
	}
}

// The module written against this checkout passes go vet with no network:
// go.work gives it the sdk and the checkout's go.sum its dependencies.
func TestWrite_VetsOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go vet on a new module")
	}
	t.Parallel()
	o := variants(t)["checkout"]
	dir := t.TempDir()
	if _, err := Write(dir, o); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local", "GOWORK=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go vet ./... in the new module: %v\n%s", err, out)
	}
}
