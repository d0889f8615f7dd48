package sessiontmp

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/yagent/yagent/internal/localstat"
)

// holdSuffix names the folder beside a session folder that lists the
// background commands keeping it.
const holdSuffix = ".hold"

// DefaultPoll is how often a host looks whether the background commands
// keeping an ended session's folder have ended.
const DefaultPoll = 500 * time.Millisecond

// Root returns the folder this user's session temp folders live under,
// made 0700 when missing and checked to be the user's own folder (not a
// symlink, nobody else's, closed to others): $TMPDIR/yagent-tmp-UID when
// TMPDIR names a folder other than /tmp; else /var/tmp/yagent-tmp-UID on
// Linux, outside /tmp, which a command whose /tmp is the machine's may
// reach; else (a read-only /var/tmp, another system) the system's temp
// folder.
func Root() (string, error) {
	name := "yagent-tmp-" + strconv.Itoa(os.Getuid())
	var bases []string
	if d := os.Getenv("TMPDIR"); filepath.IsAbs(d) && filepath.Clean(d) != "/tmp" {
		bases = append(bases, filepath.Clean(d))
	}
	if runtime.GOOS == "linux" {
		bases = append(bases, "/var/tmp")
	}
	bases = append(bases, os.TempDir())
	var errs []error
	for _, b := range bases {
		r := filepath.Join(b, name)
		if err := ownFolder(r); err != nil {
			errs = append(errs, err)
			continue
		}
		if real, err := filepath.EvalSymlinks(r); err == nil {
			r = real
		}
		return r, nil
	}
	return "", fmt.Errorf("no folder for the sessions' temp folders: %w", errors.Join(errs...))
}

// ownFolder makes dir 0700 when missing and checks it is this user's own
// folder: a folder someone else made in a shared temp folder is refused.
func ownFolder(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder (a symlink or a file someone put there)", dir)
	}
	if uid, ok := owner(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not to this user", dir, uid)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// Folders are the session temp folders of one host process: made on a
// session's first call, removed when the session and its last background
// command have ended. Safe for concurrent use.
type Folders struct {
	root string
	self string // this process's mark in its folders' names: s.PID.START
	log  *slog.Logger
	poll time.Duration

	// sizeMB is the size of each new folder's tmpfs, 0 for none: set to
	// 0 after a mount fails, which sizeErr keeps.
	sizeMB  int
	sizeErr error

	mu      sync.Mutex
	live    map[string]string // session id → its folder
	pending map[string]bool   // folders of ended sessions a command holds
	closed  bool
	looking bool // the loop over pending runs
	stop    chan struct{}
}

// Options configure Open.
type Options struct {
	// Root is the folder of the session folders; "" = Root().
	Root string
	// Logger hears of folders that could not be removed; nil = discarded.
	Logger *slog.Logger
	// Poll is how often held folders are looked at; 0 = DefaultPoll.
	Poll time.Duration
	// SizeMB bounds each folder (sandbox.tmp_size_mb): a tmpfs of that
	// many MiB is mounted on it, where this process may mount one; 0
	// leaves the folders on the disk under Root.
	SizeMB int
}

// Open returns the Folders of this process under opts.Root, after a sweep
// of what crashed hosts left: a folder whose maker is gone is removed,
// unless a background command still holds it (it is then removed once
// that one ends, while this process lives).
func Open(opts Options) (*Folders, error) {
	root := opts.Root
	if root == "" {
		var err error
		if root, err = Root(); err != nil {
			return nil, err
		}
	}
	start, ok := procStart(os.Getpid())
	if !ok {
		return nil, errors.New("sessiontmp: this process's start time cannot be read")
	}
	f := &Folders{
		root: root, self: "s." + strconv.Itoa(os.Getpid()) + "." + start, log: opts.Logger, poll: opts.Poll, sizeMB: max(opts.SizeMB, 0),
		live: map[string]string{}, pending: map[string]bool{}, stop: make(chan struct{}),
	}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	if f.poll <= 0 {
		f.poll = DefaultPoll
	}
	f.sweep()
	return f, nil
}

// RootDir is the folder the session folders live under.
func (f *Folders) RootDir() string { return f.root }

// Size is the size in MiB each new folder gets (Options.SizeMB), 0 when
// it gets none; err says why a size asked for could not be given (the
// folders then take what the disk under Root has).
func (f *Folders) Size() (mb int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sizeMB, f.sizeErr
}

// Dir returns the folder of session id, made (0700) on first use, and
// made again if it went away since.
func (f *Folders) Dir(id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return "", errors.New("sessiontmp: the host is stopping")
	}
	d := f.live[id]
	if d != "" {
		if _, err := localstat.Lstat(d); err == nil {
			return d, nil
		}
		if err := f.makeFolder(d); err != nil {
			return "", err
		}
		return d, nil
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	d = filepath.Join(f.root, f.self+"."+hex.EncodeToString(b))
	if err := f.makeFolder(d); err != nil {
		return "", err
	}
	f.live[id] = d
	return d, nil
}

// makeFolder makes a session folder and its .hold folder beside it, and
// mounts on the folder a tmpfs of f.sizeMB MiB, in this process's mount
// namespace, which the plugins share: the file tools see what commands
// write, and a command's writes to its /tmp, /var/tmp and /dev/shm stop
// at the size (No space left on device). Where the mount fails (not root,
// another system), the folder stays on the disk and the failure is logged
// once and kept for Size. f.mu is held.
func (f *Folders) makeFolder(dir string) error {
	if err := os.Mkdir(dir+holdSuffix, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("sessiontmp: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("sessiontmp: %w", err)
	}
	if f.sizeMB == 0 {
		return nil
	}
	if err := mountSized(dir, f.sizeMB); err != nil {
		f.sizeMB, f.sizeErr = 0, err
		f.log.Warn("sessions' temp folders get no size of their own (sandbox.tmp_size_mb): they take what the disk has", "error", err)
	}
	return nil
}

// ProbeSize says whether this process can give the session folders under
// root a size of their own: it mounts a tmpfs of 1 MiB on a folder of its
// own there, and takes it away. nil when it can.
func ProbeSize(root string) error {
	dir, err := os.MkdirTemp(root, "probe-")
	if err != nil {
		return err
	}
	defer os.Remove(dir)
	if err := mountSized(dir, 1); err != nil {
		return err
	}
	return unmount(dir)
}

// Free says how much the sized session folder dir has left: its free
// bytes, and whether it is full (less than a MiB, or no inode, left). ok
// is false where dir has no size of its own.
func Free(dir string) (free uint64, full, ok bool) {
	free, files, ok := sized(dir)
	if !ok {
		return 0, false, false
	}
	return free, free < 1<<20 || files == 0, true
}

// End says session id has ended (its plugins have released what they
// held for it): its folder goes now, or, while a background command holds
// it, once the last one has ended.
func (f *Folders) End(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.live[id]
	if d == "" {
		return
	}
	delete(f.live, id)
	f.release(d)
}

// release removes d unless a command holds it; a held one is looked at
// until it is not. f.mu is held.
func (f *Folders) release(d string) {
	if held(d) {
		f.pending[d] = true
		f.look()
		return
	}
	f.remove(d)
}

// look starts the loop over pending folders, unless it runs. f.mu is held.
func (f *Folders) look() {
	if f.looking || f.closed || len(f.pending) == 0 {
		return
	}
	f.looking = true
	go f.loop()
}

func (f *Folders) loop() {
	t := time.NewTicker(f.poll)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		f.mu.Lock()
		for d := range f.pending {
			if !held(d) {
				delete(f.pending, d)
				f.remove(d)
			}
		}
		if len(f.pending) == 0 {
			f.looking = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
	}
}

// Close is the host's stop: the folders of live sessions go unless a
// command holds them, and the held ones are left to the sweep of the next
// host's start.
func (f *Folders) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	for id, d := range f.live {
		delete(f.live, id)
		if !held(d) {
			f.remove(d)
		}
	}
	f.closed = true
	close(f.stop)
}

// remove removes folder d and its .hold folder.
func (f *Folders) remove(d string) {
	for _, p := range []string{d, d + holdSuffix} {
		if err := removeFolder(p); err != nil {
			f.log.Warn("a session's temp folder could not be removed", "folder", p, "error", err)
		}
	}
}

// sweep removes what hosts that are gone left under the root: their
// sessions' folders that no background command holds (those held are
// looked at until they are not), and .hold folders whose folder is gone.
func (f *Folders) sweep() {
	entries, err := os.ReadDir(f.root)
	if err != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range entries {
		name := e.Name()
		d := filepath.Join(f.root, name)
		if base, ok := strings.CutSuffix(name, holdSuffix); ok {
			if _, err := os.Lstat(filepath.Join(f.root, base)); errors.Is(err, fs.ErrNotExist) && !makerLives(base) {
				f.remove(filepath.Join(f.root, base))
			}
			continue
		}
		if !e.IsDir() || makerLives(name) {
			continue
		}
		if pid, _ := maker(name); pid == 0 {
			continue // not one of ours
		}
		f.release(d)
	}
}

// maker is the pid and start time a folder's name s.PID.START.RANDOM
// carries.
func maker(name string) (pid int, start string) {
	parts := strings.Split(name, ".")
	if len(parts) != 4 || parts[0] != "s" {
		return 0, ""
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return 0, ""
	}
	return pid, parts[2]
}

// makerLives says the host whose mark is in name still runs; a name that
// is not a session folder's counts as live (it is left alone).
func makerLives(name string) bool {
	pid, start := maker(name)
	if pid == 0 {
		return true
	}
	now, ok := procStart(pid)
	return ok && now == start
}

// Hold records that the background command pid (whose cgroup folder is
// cgroupDir, "" without one) keeps the session folder dir: the shell
// plugin calls it as the command starts, before its call returns, so the
// host sees it before it ends the session.
func Hold(dir string, pid int, cgroupDir string) error {
	if pid, _ := maker(filepath.Base(dir)); pid == 0 || !filepath.IsAbs(dir) {
		return fmt.Errorf("sessiontmp: %q is not a session's temp folder", dir)
	}
	start, ok := procStart(pid)
	if !ok {
		return nil // already gone: it holds nothing
	}
	body := ""
	if cgroupDir != "" {
		body = "cgroup " + cgroupDir + "\n"
	}
	rec := filepath.Join(dir+holdSuffix, strconv.Itoa(pid)+"."+start)
	if err := os.WriteFile(rec, []byte(body), 0o600); err != nil {
		return fmt.Errorf("sessiontmp: recording the background command: %w", err)
	}
	return nil
}

// held says a background command that lives holds folder d.
func held(d string) bool {
	entries, err := os.ReadDir(d + holdSuffix)
	if err != nil {
		return false
	}
	for _, e := range entries {
		pidText, start, ok := strings.Cut(e.Name(), ".")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 {
			continue
		}
		if now, ok := procStart(pid); ok && now == start {
			return true
		}
		b, _ := os.ReadFile(filepath.Join(d+holdSuffix, e.Name()))
		if cg, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "cgroup "); ok && populated(cg) {
			return true // what it left behind in its cgroup lives on
		}
	}
	return false
}

// populated says the cgroup folder dir holds a process.
func populated(dir string) bool {
	if !filepath.IsAbs(dir) {
		return false
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	return err == nil && strings.Contains(string(b), "populated 1")
}

// removeFolder removes dir and everything in it, opening the folders a
// command closed to writes (chmod 500) on the way. A tmpfs mounted on it
// is detached first: what is in it goes once no namespace holds it.
func removeFolder(dir string) error {
	if err := unmount(dir); err != nil {
		return fmt.Errorf("unmounting the folder's tmpfs: %w", err)
	}
	err := os.RemoveAll(dir)
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
