package pluginmgr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
)

// Lock is the pin lock file: the sha256 each pinned plugin binary must have.
//
//	{"plugins": {"hello": {"sha256": "9f86…", "path": "/home/me/.yagent/plugins/yagent-plugin-hello"}}}
type Lock struct {
	Plugins map[string]LockEntry `json:"plugins"`
}

// LockEntry pins one plugin. Path records where the binary was when it was
// pinned; only the sum is checked.
type LockEntry struct {
	SHA256 string `json:"sha256"`
	Path   string `json:"path,omitempty"`
}

// PinMismatchError refuses a plugin whose binary is not the pinned one.
type PinMismatchError struct {
	Name, Path       string
	Expected, Actual string
}

func (e *PinMismatchError) Error() string {
	return fmt.Sprintf("plugin %s refused: %s has sha256 %s but the lock file pins %s; if this binary is trusted, pin it again (yagent plugins pin %s)",
		e.Name, e.Path, e.Actual, e.Expected, e.Name)
}

// ReadLock reads the lock file at path; a missing file is an empty lock.
func ReadLock(path string) (Lock, error) {
	l := Lock{Plugins: map[string]LockEntry{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, fmt.Errorf("read lock file: %w", err)
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return Lock{Plugins: map[string]LockEntry{}}, fmt.Errorf("lock file %s: %w", path, err)
	}
	if l.Plugins == nil {
		l.Plugins = map[string]LockEntry{}
	}
	for name, e := range l.Plugins {
		if !shaPattern.MatchString(e.SHA256) {
			return Lock{Plugins: map[string]LockEntry{}}, fmt.Errorf("lock file %s: plugin %s: %q is not a lowercase hex sha256", path, name, e.SHA256)
		}
	}
	return l, nil
}

// WriteLock pins plugins in the lock file at path: each plugin with a known
// sum gets an entry with its current sum (re-pinning a refused one); the
// other entries of the file are kept. The file is written atomically.
func WriteLock(path string, plugins []*Plugin) error {
	l, err := ReadLock(path)
	if err != nil {
		return err
	}
	for _, p := range plugins {
		if p == nil || p.SHA256 == "" {
			continue
		}
		l.Plugins[p.Name] = LockEntry{SHA256: p.SHA256, Path: p.Path}
	}
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write lock file: %w", err)
	}
	return nil
}

// Check says whether the plugin name with binary sum is pinned: true when
// the lock names it with this sum, false when the lock does not name it,
// and a *PinMismatchError when the lock names another sum.
func (l Lock) Check(name, path, sum string) (bool, error) {
	e, ok := l.Plugins[name]
	if !ok {
		return false, nil
	}
	if e.SHA256 != sum {
		return false, &PinMismatchError{Name: name, Path: path, Expected: e.SHA256, Actual: sum}
	}
	return true, nil
}

// PinStatus is the verdict of Verify on one plugin.
type PinStatus string

// The verdicts of Verify.
const (
	PinOK       PinStatus = "pinned"   // the binary has the pinned sum
	PinMismatch PinStatus = "mismatch" // the binary has another sum: refused
	PinNone     PinStatus = "unpinned" // the lock does not name the plugin
	PinMissing  PinStatus = "missing"  // the lock names a plugin no folder holds
	PinUnknown  PinStatus = "unknown"  // the binary's sum could not be computed
)

// Verdict is Verify's word on one plugin.
type Verdict struct {
	Name     string
	Path     string
	Expected string // the pinned sum, "" when unpinned
	Actual   string // the binary's sum, "" when missing or unknown
	Status   PinStatus
}

// Verify compares every plugin (as Load returned them) with the lock, and
// reports the lock's entries no plugin matches, sorted by name.
func (l Lock) Verify(plugins []*Plugin) []Verdict {
	var out []Verdict
	seen := map[string]bool{}
	for _, p := range plugins {
		seen[p.Name] = true
		v := Verdict{Name: p.Name, Path: p.Path, Actual: p.SHA256}
		e, pinned := l.Plugins[p.Name]
		v.Expected = e.SHA256
		switch {
		case p.SHA256 == "":
			v.Status = PinUnknown
		case !pinned:
			v.Status = PinNone
		case e.SHA256 == p.SHA256:
			v.Status = PinOK
		default:
			v.Status = PinMismatch
		}
		out = append(out, v)
	}
	for name, e := range l.Plugins {
		if !seen[name] {
			out = append(out, Verdict{Name: name, Path: e.Path, Expected: e.SHA256, Status: PinMissing})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
