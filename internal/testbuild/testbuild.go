package testbuild

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Families are the first-party tool families, each built from
// ./plugins/<family> into yagent-plugin-<family>.
var Families = []string{"fs", "shell", "search", "browser", "cognitive"}

// Target is one binary to build.
type Target struct {
	// Pkg is the main package, relative to the module root ("./cmd/yagent").
	Pkg string
	// Out is the file the binary is written to; its folder is created.
	Out string
	// Flags are extra go build flags, such as -ldflags.
	Flags []string
}

// Host is the yagent binary, written to dir/yagent.
func Host(dir string, flags ...string) Target {
	return Target{Pkg: "./cmd/yagent", Out: filepath.Join(dir, "yagent"), Flags: flags}
}

// Plugin is a first-party family's plugin, written to
// dir/yagent-plugin-<family>.
func Plugin(dir, family string) Target {
	return Target{Pkg: "./plugins/" + family, Out: filepath.Join(dir, "yagent-plugin-"+family)}
}

// Plugins are the plugins of the families named, or of every family when
// none is, all written to dir.
func Plugins(dir string, families ...string) []Target {
	if len(families) == 0 {
		families = Families
	}
	ts := make([]Target, len(families))
	for i, f := range families {
		ts[i] = Plugin(dir, f)
	}
	return ts
}

// Root is the module root: the nearest folder at or above the working
// directory that holds go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testbuild: no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// Build compiles the targets from the module root. Targets with the same
// flags and distinct package names share one go build; the error names the
// package that failed and carries the compiler's output.
func Build(targets ...Target) error {
	root, err := Root()
	if err != nil {
		return err
	}
	for _, g := range groups(targets) {
		if err := buildGroup(root, g); err != nil {
			return err
		}
	}
	return nil
}

// groups splits the targets into go build invocations: one per set of
// flags, and a new one whenever two packages would write the same binary
// name into go build's output folder.
func groups(targets []Target) [][]Target {
	var out [][]Target
next:
	for _, t := range targets {
		for i, g := range out {
			if slices.Equal(g[0].Flags, t.Flags) && !slices.ContainsFunc(g, func(o Target) bool { return binName(o.Pkg) == binName(t.Pkg) }) {
				out[i] = append(g, t)
				continue next
			}
		}
		out = append(out, []Target{t})
	}
	return out
}

// binName is the file go build -o <dir>/ writes for a main package.
func binName(pkg string) string {
	return filepath.Base(filepath.FromSlash(strings.TrimSuffix(pkg, "/")))
}

func buildGroup(root string, g []Target) error {
	tmp, err := os.MkdirTemp("", "testbuild-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	args := append([]string{"build"}, g[0].Flags...)
	args = append(args, "-o", tmp+string(filepath.Separator))
	for _, t := range g {
		args = append(args, t.Pkg)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, t := range g {
		if err := place(filepath.Join(tmp, binName(t.Pkg)), t.Out); err != nil {
			return fmt.Errorf("testbuild: %s: %w", t.Pkg, err)
		}
	}
	return nil
}

// place moves a built binary to its target, copying when the two are on
// different filesystems.
func place(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if err := os.Rename(from, to); err == nil {
		return nil
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
