package pluginmgr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"

	"github.com/yagent/yagent/internal/atomicfile"
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

// LockError is a lock file that exists but cannot be read or parsed. It
// names the file and the command that repairs it: a host that cannot read
// its pins must say so, not run as if nothing were pinned.
type LockError struct {
	Path string
	Err  error
	// Fix says how to repair the file; "" says nothing. ReadLock leaves it
	// empty (a managed lock is not the user's to repair); the functions
	// that handle the user's lock file set it (WithUserFix).
	Fix string
}

func (e *LockError) Error() string {
	msg := fmt.Sprintf("lock file %s cannot be used: %v", e.Path, e.Err)
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return msg
}

// WithUserFix returns err with the repair of a user's lock file named, when
// err is a *LockError; any other err is returned as it is.
func WithUserFix(err error) error {
	var le *LockError
	if !errors.As(err, &le) {
		return err
	}
	fixed := *le
	fixed.Fix = fmt.Sprintf("repair it with `yagent plugins pin --reset` (pins the plugins found now and keeps the broken file as %s), or fix it by hand", le.Path+badLockSuffix)
	return &fixed
}

func (e *LockError) Unwrap() error { return e.Err }

// badLockSuffix names where ResetLock keeps a lock file it replaces.
const badLockSuffix = ".bad"

// ReadLock reads the lock file at path; a missing file is an empty lock.
// Any other failure is a *LockError.
func ReadLock(path string) (Lock, error) {
	l := Lock{Plugins: map[string]LockEntry{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, &LockError{Path: path, Err: err}
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return Lock{Plugins: map[string]LockEntry{}}, &LockError{Path: path, Err: fmt.Errorf("not a lock file (%w)", err)}
	}
	if l.Plugins == nil {
		l.Plugins = map[string]LockEntry{}
	}
	for name, e := range l.Plugins {
		if !shaPattern.MatchString(e.SHA256) {
			return Lock{Plugins: map[string]LockEntry{}}, &LockError{Path: path, Err: fmt.Errorf("plugin %s: %q is not a lowercase hex sha256", name, e.SHA256)}
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
		return WithUserFix(err)
	}
	return l.pin(plugins).write(path)
}

// ResetLock replaces the lock file at path with one pinning only plugins,
// whatever the old file held; a file that was there is kept beside it as
// <path>.bad. It is how a corrupt lock file is repaired.
func ResetLock(path string, plugins []*Plugin) error {
	if _, err := os.Lstat(path); err == nil {
		if err := os.Rename(path, path+badLockSuffix); err != nil {
			return fmt.Errorf("keep the old lock file: %w", err)
		}
	}
	return Lock{Plugins: map[string]LockEntry{}}.pin(plugins).write(path)
}

// Unpin removes the named plugins from the lock file at path. Naming a
// plugin the file does not pin is an error, and nothing is written.
func Unpin(path string, names []string) error {
	l, err := ReadLock(path)
	if err != nil {
		return WithUserFix(err)
	}
	for _, n := range names {
		if _, ok := l.Plugins[n]; !ok {
			return fmt.Errorf("plugin %q is not pinned in %s; `yagent plugins verify` lists the pins", n, path)
		}
	}
	for _, n := range names {
		delete(l.Plugins, n)
	}
	return l.write(path)
}

func (l Lock) pin(plugins []*Plugin) Lock {
	for _, p := range plugins {
		// A dev binary's pin would refuse the installed one once the
		// override goes.
		if p == nil || p.SHA256 == "" || p.Dev {
			continue
		}
		l.Plugins[p.Name] = LockEntry{SHA256: p.SHA256, Path: p.Path}
	}
	return l
}

func (l Lock) write(path string) error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, append(b, '\n'), 0o644); err != nil {
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
	PinOK        PinStatus = "pinned"    // the binary has the pinned sum
	PinMismatch  PinStatus = "mismatch"  // the binary has another sum: refused
	PinNone      PinStatus = "unpinned"  // the lock does not name the plugin
	PinMissing   PinStatus = "missing"   // the lock names a plugin no folder holds
	PinUnknown   PinStatus = "unknown"   // the binary's sum could not be computed
	PinDev       PinStatus = "dev"       // from the dev override folder: not checked
	PinUntrusted PinStatus = "untrusted" // unpinned where a command could write it: refused
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
// reports the lock's entries no plugin matches, sorted by name. With a
// hash func each binary is hashed again, trusting no memo: a pinned binary
// that cannot be read any more is missing.
func (l Lock) Verify(plugins []*Plugin, hash func(path string) (string, error)) []Verdict {
	var out []Verdict
	seen := map[string]bool{}
	for _, p := range plugins {
		seen[p.Name] = true
		v := Verdict{Name: p.Name, Path: p.Path, Actual: p.SHA256}
		e, pinned := l.Plugins[p.Name]
		v.Expected = e.SHA256
		if p.Dev {
			v.Status = PinDev
			out = append(out, v)
			continue
		}
		if hash != nil {
			sum, err := hash(p.Path)
			if err != nil && pinned {
				v.Actual, v.Status = "", PinMissing
				out = append(out, v)
				continue
			}
			v.Actual = sum
		}
		switch {
		case v.Actual == "":
			v.Status = PinUnknown
		case !pinned && IsUntrusted(p.Refused):
			v.Status = PinUntrusted
		case !pinned:
			v.Status = PinNone
		case e.SHA256 == v.Actual:
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

// Bad says whether v fails verification: a pinned plugin that is
// missing, mismatched or cannot be hashed.
func (v Verdict) Bad() bool {
	switch v.Status {
	case PinMismatch, PinMissing:
		return true
	case PinUnknown:
		return v.Expected != ""
	}
	return false
}
