package nav

import (
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/yagent/yagent/policy"
	"golang.org/x/mod/modfile"
)

// The type checker reads what a module names: its go.mod's directory
// replacements, the packages it imports. That is workspace content, so it
// may not decide what the search plugin loads: a module is type-checked only
// when it and every folder its go.mod replaces a module with lie inside
// the Finder's roots; otherwise its uses are word matches and the result
// says which module was skipped and why.

// roots returns the folders source may be loaded from, resolved: Roots,
// or Base alone.
func (f *Finder) roots() []string {
	dirs := f.Roots
	if len(dirs) == 0 && f.Base != "" {
		dirs = []string{f.Base}
	}
	var out []string
	for _, d := range dirs {
		if r := policy.ResolvePath(d); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// toolchainRoots are where the toolchain keeps code no workspace wrote:
// the standard library and the module cache (checksummed downloads).
func toolchainRoots() []string {
	var out []string
	if r := policy.ResolvePath(build.Default.GOROOT); r != "" {
		out = append(out, r)
	}
	cache := os.Getenv("GOMODCACHE")
	if cache == "" && build.Default.GOPATH != "" {
		cache = filepath.Join(strings.Split(build.Default.GOPATH, string(filepath.ListSeparator))[0], "pkg", "mod")
	}
	if r := policy.ResolvePath(cache); r != "" {
		out = append(out, r)
	}
	return out
}

// moduleRefusal says why the module at mod may not be type-checked, ""
// when it may.
func (f *Finder) moduleRefusal(mod string) string {
	roots := f.roots()
	if !inRoots(roots, policy.ResolvePath(mod)) {
		return fmt.Sprintf("module %s is outside the workspace", mod)
	}
	gomod := filepath.Join(mod, "go.mod")
	data, err := os.ReadFile(gomod)
	if err != nil {
		return fmt.Sprintf("module %s: %v", mod, err)
	}
	mf, err := modfile.Parse(gomod, data, nil)
	if err != nil {
		return fmt.Sprintf("module %s: its go.mod does not parse: %v", f.Shown(mod), err)
	}
	name := f.Shown(mod)
	if mf.Module != nil {
		name = fmt.Sprintf("%s (%s)", mf.Module.Mod.Path, f.Shown(mod))
	}
	for _, r := range mf.Replace {
		if r.New.Version != "" {
			continue // a module version, from the module cache
		}
		dir := r.New.Path
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(mod, dir)
		}
		if !inRoots(roots, policy.ResolvePath(dir)) {
			return fmt.Sprintf("module %s: its go.mod replaces %s with %s, outside the workspace", name, r.Old.Path, r.New.Path)
		}
	}
	return ""
}

// shownDefinition reports whether a definition in file may be described
// (its signature, a constant's value): inside the roots or the toolchain's.
func (f *Finder) shownDefinition(file string) bool {
	r := policy.ResolvePath(file)
	return inRoots(f.roots(), r) || inRoots(toolchainRoots(), r)
}

func inRoots(roots []string, p string) bool {
	return p != "" && slices.ContainsFunc(roots, func(r string) bool { return policy.Within(r, p, true) })
}
