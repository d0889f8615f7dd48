package scaffold

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"golang.org/x/mod/modfile"
)

// Module is yagent's module path: the one a plugin requires for the sdk,
// and the one a checkout's go.mod names.
const Module = "github.com/yagent/yagent"

// BinaryPrefix starts a plugin binary's name, yagent-plugin-<name>, the
// name the host looks for (pluginmgr.BinaryPrefix).
const BinaryPrefix = "yagent-plugin-"

//go:embed template/*.tmpl
var templates embed.FS

// Options say what to write.
type Options struct {
	// Name is the plugin's name, valid for the host (pluginmgr.ValidName):
	// the binary is yagent-plugin-<Name>.
	Name string
	// Module is the new module's path; "" is example.com/yagent-plugin-<Name>.
	Module string
	// GoVersion is the go line of go.mod and go.work ("1.26.8"): at least
	// the one of the yagent the module builds against.
	GoVersion string
	// Checkout is the root of a yagent checkout to build against: a go.work
	// is written that uses the module and the checkout, and go.mod requires
	// no yagent version. "" writes no go.work.
	Checkout string
	// Require is the yagent version go.mod requires when there is no
	// Checkout ("v0.4.0"); "" requires none, and go mod tidy adds the
	// latest.
	Require string
}

// DefaultModule is the module path of a plugin named name when none is
// given.
func DefaultModule(name string) string { return "example.com/" + BinaryPrefix + name }

// ToolName is the name of the tool the scaffold of plugin name serves: the
// plugin's name, with _ for -, then _count_words, so that it names no tool
// of another plugin.
func ToolName(name string) string { return strings.ReplaceAll(name, "-", "_") + "_count_words" }

// data is what the templates read.
type data struct {
	Name, Binary, Module, Tool, GoVersion, Yagent, Require string
	// Use is the checkout as go.work names it ("" for no go.work).
	Use string
}

// file is one file of the module: its name and its template.
type file struct{ name, tmpl string }

// files are the module's files, in the order they are reported.
func files(o Options) []file {
	out := []file{{"go.mod", "go.mod.tmpl"}}
	if o.Checkout != "" {
		out = append(out, file{"go.work", "go.work.tmpl"})
	}
	return append(out,
		file{"main.go", "main.go.tmpl"},
		file{"count_words.go", "tool.go.tmpl"},
		file{"count_words_test.go", "tool_test.go.tmpl"},
		file{"Makefile", "Makefile.tmpl"},
		file{"README.md", "README.md.tmpl"},
		file{".gitignore", "gitignore.tmpl"},
	)
}

// Render returns the files of the module o describes, by name, in the
// order they are written, for a module written to dir (go.work names the
// checkout relative to it when the checkout holds it).
func Render(dir string, o Options) (names []string, contents map[string][]byte, err error) {
	if o.Name == "" {
		return nil, nil, errors.New("scaffold: no plugin name")
	}
	if o.GoVersion == "" {
		return nil, nil, errors.New("scaffold: no go version")
	}
	d := data{
		Name:      o.Name,
		Binary:    BinaryPrefix + o.Name,
		Module:    o.Module,
		Tool:      ToolName(o.Name),
		GoVersion: o.GoVersion,
		Yagent:    Module,
		Require:   o.Require,
	}
	if d.Module == "" {
		d.Module = DefaultModule(o.Name)
	}
	if o.Checkout != "" {
		d.Require = ""
		d.Use, err = usePath(dir, o.Checkout)
		if err != nil {
			return nil, nil, err
		}
	}
	t, err := template.ParseFS(templates, "template/*.tmpl")
	if err != nil {
		return nil, nil, err
	}
	contents = map[string][]byte{}
	for _, f := range files(o) {
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, f.tmpl, d); err != nil {
			return nil, nil, fmt.Errorf("scaffold: %s: %w", f.name, err)
		}
		names = append(names, f.name)
		contents[f.name] = b.Bytes()
	}
	return names, contents, nil
}

// usePath is checkout as go.work in dir names it: relative when the
// checkout holds dir (the module moves with the tree), absolute otherwise.
func usePath(dir, checkout string) (string, error) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(checkout)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(absDir, abs)
	if err != nil {
		return abs, nil
	}
	for _, el := range strings.Split(filepath.ToSlash(rel), "/") {
		if el != ".." {
			return abs, nil
		}
	}
	return filepath.ToSlash(rel), nil
}

// ErrNotEmpty is returned by Write for a folder that holds something.
var ErrNotEmpty = errors.New("folder is not empty")

// Write writes the module o describes into dir, which it creates, and
// returns the names of the files written. A dir that exists must be an
// empty folder: Write never overwrites a file.
func Write(dir string, o Options) ([]string, error) {
	if err := checkEmpty(dir); err != nil {
		return nil, err
	}
	names, contents, err := Render(dir, o)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, n := range names {
		f, err := os.OpenFile(filepath.Join(dir, n), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, err
		}
		_, err = f.Write(contents[n])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	return names, nil
}

// checkEmpty returns nil when dir does not exist or is an empty folder.
func checkEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		if fi, serr := os.Stat(dir); serr == nil && !fi.IsDir() {
			return fmt.Errorf("%s is a file, not a folder: name a new or empty folder", dir)
		}
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s: %w (it holds %s): name a new or empty folder", dir, ErrNotEmpty, entries[0].Name())
	}
	return nil
}

// Checkout reads the go.mod of root and returns its go version when it is
// yagent's (module Module), an error saying what root is otherwise.
func Checkout(root string) (goVersion string, err error) {
	path := filepath.Join(root, "go.mod")
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s is not a yagent checkout: %w", root, err)
	}
	f, err := modfile.ParseLax(path, b, nil)
	if err != nil {
		return "", fmt.Errorf("%s is not a yagent checkout: %w", root, err)
	}
	if f.Module == nil || f.Module.Mod.Path != Module {
		got := "no module"
		if f.Module != nil {
			got = "module " + f.Module.Mod.Path
		}
		return "", fmt.Errorf("%s is not a yagent checkout: its go.mod names %s, not %s", root, got, Module)
	}
	if f.Go == nil {
		return "", fmt.Errorf("%s: go.mod has no go line", path)
	}
	return f.Go.Version, nil
}

// FindCheckout walks up from dir (dir included) for a yagent checkout: a
// folder whose go.mod's module is Module. It returns its root and go
// version, or "" when no folder above dir is one.
func FindCheckout(dir string) (root, goVersion string) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if v, err := Checkout(dir); err == nil {
				return dir, v
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ""
		}
		dir = parent
	}
}
