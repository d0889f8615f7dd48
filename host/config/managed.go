package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultManagedDir holds the admin's managed layer: config.yaml, profiles/
// and plugins.lock.
const DefaultManagedDir = "/etc/yagent"

// ManagedLockName is the managed layer's plugin lock file.
const ManagedLockName = "plugins.lock"

// managedDirEnv names an environment variable that moves the managed layer
// away from /etc/yagent. It is empty in release builds (the variable is then
// never read); test builds set it with
// -ldflags "-X github.com/yagent/yagent/host/config.managedDirEnv=YAGENT_TEST_MANAGED_DIR".
var managedDirEnv string

// ManagedDir returns the folder of the managed layer opts selects:
// opts.ManagedDir, else (test builds only) the seam variable, else
// /etc/yagent.
func ManagedDir(opts LoadOptions) string {
	if opts.ManagedDir != "" {
		return opts.ManagedDir
	}
	if managedDirEnv != "" {
		if v := os.Getenv(managedDirEnv); v != "" {
			return v
		}
	}
	return DefaultManagedDir
}

// UntrustedManagedError refuses a managed file that someone other than root
// could have written: trusting it would let that someone set the ceiling,
// and ignoring it would let an admin's deny vanish without a word.
type UntrustedManagedError struct {
	// File is the managed file or folder refused.
	File string
	// Culprit is the file or folder whose owner or mode is wrong: File
	// itself or a folder above it.
	Culprit string
	// Problem says what is wrong with Culprit.
	Problem string
}

func (e *UntrustedManagedError) Error() string {
	where := e.Culprit
	if e.Culprit != e.File {
		where = fmt.Sprintf("its folder %s", e.Culprit)
	}
	return fmt.Sprintf("managed layer %s refused: %s is %s; the managed layer is trusted only when root owns it and no one else can write it "+
		"(fix: sudo chown root %s && sudo chmod go-w %s)", e.File, where, e.Problem, e.Culprit, e.Culprit)
}

// managed is the managed layer as read: its config, its profiles by name,
// and its lock file; every path is checked.
type managed struct {
	dir      string
	config   *layer            // nil when there is no config.yaml
	profiles map[string]string // name -> path
	lock     string            // "" when there is no plugins.lock
}

// readManaged checks and reads the managed layer; a missing folder is no
// managed layer. Any file of it that is not trusted fails the load
// (fail closed): a widening the admin did not write must not pass silently.
func (l *loader) readManaged() (*managed, error) {
	m := &managed{dir: ManagedDir(l.opts), profiles: map[string]string{}}
	fi, err := os.Stat(m.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config: managed layer %s: %w", m.dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("config: managed layer %s is not a folder; remove it or make it a folder owned by root", m.dir)
	}
	if err := l.trustManaged(m.dir); err != nil {
		return nil, err
	}
	cfg := filepath.Join(m.dir, configFileName)
	if ok, err := l.managedFile(cfg); err != nil {
		return nil, err
	} else if ok {
		ly, _, err := l.readFile(cfg, configShape())
		if err != nil {
			return nil, err
		}
		ly.who = whoManaged
		m.config = &ly
	}
	lock := filepath.Join(m.dir, ManagedLockName)
	if ok, err := l.managedFile(lock); err != nil {
		return nil, err
	} else if ok {
		m.lock = lock
	}
	pdir := filepath.Join(m.dir, profilesDir)
	ok, err := l.managedFile(pdir)
	if err != nil || !ok {
		return m, err
	}
	entries, err := os.ReadDir(pdir)
	if err != nil {
		return nil, fmt.Errorf("config: managed layer %s: %w", pdir, err)
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".yaml")
		if !ok || e.IsDir() {
			continue
		}
		path := filepath.Join(pdir, e.Name())
		if !validProfileName(name) {
			return nil, fmt.Errorf("config: %s: invalid profile file name (want lowercase letters, digits, - and _, then .yaml)", path)
		}
		if err := l.trustManaged(path); err != nil {
			return nil, err
		}
		m.profiles[name] = path
	}
	return m, nil
}

// managedFile reports whether path exists, after checking that it is
// trusted.
func (l *loader) managedFile(path string) (bool, error) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err := l.trustManaged(path); err != nil {
		return false, err
	}
	return true, nil
}

// trustManaged refuses path unless it, what it resolves to, and every folder
// above that are owned by the managed owner (root) and writable by no one
// else. A sticky folder writable by all (/tmp, /var/tmp) may sit above the
// layer: nobody else can rename what the owner put in it.
func (l *loader) trustManaged(path string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("config: managed layer %s: %w", path, err)
	}
	for p, own := real, true; ; p, own = filepath.Dir(p), false {
		fi, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("config: managed layer %s: %w", path, err)
		}
		if problem := l.managedProblem(fi, own); problem != "" {
			return fmt.Errorf("config: %w", &UntrustedManagedError{File: path, Culprit: p, Problem: problem})
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// managedProblem says what makes fi untrusted, "" when nothing does.
func (l *loader) managedProblem(fi fs.FileInfo, own bool) string {
	uid, ok := fileOwner(fi)
	if !ok {
		return "of unknown owner"
	}
	if uid != l.opts.ManagedOwner && uid != 0 {
		return fmt.Sprintf("owned by uid %d, not root", uid)
	}
	perm := fi.Mode().Perm()
	if perm&0o022 == 0 {
		return ""
	}
	if !own && fi.IsDir() && fi.Mode()&fs.ModeSticky != 0 {
		return ""
	}
	return fmt.Sprintf("writable by others (mode %04o)", perm)
}
