package pluginmgr

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// BinaryPrefix starts the file name of every plugin binary:
// yagent-plugin-<name>.
const BinaryPrefix = "yagent-plugin-"

// Found is one plugin binary found by Discover.
type Found struct {
	// Name is the plugin's name, the <name> of yagent-plugin-<name>.
	Name string
	// Path is the binary's absolute path.
	Path string
	// Dev is set when the binary is in the dev override folder
	// (Options.DevDir): used without a pin check, counted unpinned.
	Dev bool
	// Shadows is, for a Dev binary, the path of the binary of that name in
	// the plugin folders it overrides; "" when they hold none.
	Shadows string
}

// DefaultDirs returns the plugin folders in search order: the plugins folder
// beside the yagent binary at exePath (bin/plugins for bin/yagent), the
// folder that binary is in (where `go install ./cmd/...` puts yagent and
// every yagent-plugin-* side by side: GOBIN, ~/go/bin), both of the binary
// its links resolve to and both skipped when exePath is "", then
// ~/.yagent/plugins, then each entry of $YAGENT_PLUGIN_PATH. Repeated
// folders are listed once.
//
// The plugins folder comes before the binary's own: it is the layout
// make build, make dist's archives and the container image give, a folder
// that holds the plugins built with this host alone, where the binary's
// folder may be shared (~/go/bin, /usr/local/bin) with a yagent-plugin-*
// that an earlier go install or another package left there. Both come
// before ~/.yagent/plugins, since the first binary of a name wins: the
// plugins installed with the host, of its version and plugin protocol,
// are not shadowed by an older copy in the user's folder, which is for
// plugins of one's own.
func DefaultDirs(exePath string) []string {
	var dirs []string
	if exePath != "" {
		if resolved, err := filepath.EvalSymlinks(exePath); err == nil {
			exePath = resolved
		}
		dirs = append(dirs, filepath.Join(filepath.Dir(exePath), "plugins"), filepath.Dir(exePath))
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".yagent", "plugins"))
	}
	for _, d := range filepath.SplitList(os.Getenv("YAGENT_PLUGIN_PATH")) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	seen := map[string]bool{}
	out := dirs[:0]
	for _, d := range dirs {
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// Discover lists the plugin binaries in Options.Dirs, sorted by name:
// executable regular files (or links to them) named yagent-plugin-<name>.
// The dev override folder (Options.DevDir) comes before them all: its
// binaries are marked Dev and override the plugin folders' of that name.
// Folders are searched in order and the first binary of a name wins; a
// later one is reported in the warnings, as is each first-party plugin
// (Options.FirstParty) found nowhere, once, with the folders searched.
// A missing folder is not an error, but a missing dev folder is warned of.
func (m *Manager) Discover() ([]Found, []string) {
	var (
		found    []Found
		warnings []string
		byName   = map[string]string{}
		dev      = map[string]int{} // name -> index in found
	)
	dirs := m.opts.Dirs
	if m.opts.DevDir != "" {
		dirs = append([]string{m.opts.DevDir}, dirs...)
	}
	for i, dir := range dirs {
		isDev := m.opts.DevDir != "" && i == 0
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			if isDev || !errors.Is(err, fs.ErrNotExist) {
				warnings = append(warnings, fmt.Sprintf("plugin folder %s cannot be read: %v", dir, err))
			}
			continue
		}
		for _, e := range entries {
			name, ok := strings.CutPrefix(e.Name(), BinaryPrefix)
			if !ok || name == "" || e.IsDir() {
				continue
			}
			path := filepath.Join(dir, e.Name())
			fi, err := os.Stat(path)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			if fi.Mode().Perm()&0o111 == 0 {
				warnings = append(warnings, fmt.Sprintf("%s is not executable; ignored", path))
				continue
			}
			if !ValidName(name) {
				warnings = append(warnings, fmt.Sprintf("%s: %q is not a plugin name (lowercase letters, digits, - and _); ignored", path, name))
				continue
			}
			if first, dup := byName[name]; dup {
				if j, ok := dev[name]; ok && found[j].Shadows == "" && !isDev && first != path {
					found[j].Shadows = path // said by the dev override's warning
					continue
				}
				if first != path {
					warnings = append(warnings, fmt.Sprintf("plugin %s: %s is ignored, %s was found first", name, path, first))
				}
				continue
			}
			byName[name] = path
			if isDev {
				dev[name] = len(found)
			}
			found = append(found, Found{Name: name, Path: path, Dev: isDev})
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Name < found[j].Name })
	for _, name := range m.opts.FirstParty {
		if _, ok := byName[name]; !ok {
			warnings = append(warnings, fmt.Sprintf("first-party plugin binary %s%s not found in %s; the %s tools are unavailable",
				BinaryPrefix, name, dirList(m.opts.Dirs), name))
		}
	}
	return found, warnings
}

func dirList(dirs []string) string {
	if len(dirs) == 0 {
		return "no plugin folder (none configured)"
	}
	return strings.Join(dirs, ", ")
}

// ValidName reports whether name is a plugin name the host accepts, the
// <name> of a binary yagent-plugin-<name>: lowercase letters, digits, - and
// _, at least one. A binary whose name is not one is ignored.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
		default:
			return false
		}
	}
	return true
}
