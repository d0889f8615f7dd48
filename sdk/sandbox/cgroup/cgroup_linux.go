package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tree is one process's folder of command cgroups.
type tree struct {
	proc string // this process's /proc entry
	pid  int

	rootOnce sync.Once
	root     string
	rootErr  error

	makeOnce sync.Once
	makeErr  error

	next atomic.Int64

	// noMark makes Release move what is left to kept-N even where the
	// released mark could be set: a test seam.
	noMark bool

	// The bounds: how each reaches commands (resolved once), and what was
	// made for them, lazily, under bmu, which also guards the ways' ok
	// and why.
	waysOnce sync.Once
	ways     map[string]*way
	bmu      sync.Mutex
	v2On     map[string]bool // controllers enabled in root's cgroup.subtree_control
	v1Made   map[string]bool // cgroup v1 base folders made, by folder
	back     map[string]int  // own/tasks of each cgroup v1 hierarchy, open for writing

	mu        sync.Mutex
	kept      []string // released folders that still held processes
	idle      []idle   // released live groups left empty, for reuse
	lastSweep time.Time
}

// idle is an empty live group kept open for the next command: making and
// removing a cgroup costs more than the rest of starting one in it.
type idle struct {
	dir    string
	fd     int
	n      int64
	v1     []*v1group // its groups in the cgroup v1 hierarchies, kept with it
	limits Limits     // the bounds last set on it
}

var std = &tree{proc: "/proc/self", pid: os.Getpid()}

// Bounds of the sweeps: they run on a command's start, so they stay small.
const (
	sweepEvery   = time.Second      // at most one sweep of kept folders per this
	sweepKept    = 16               // kept folders tried per sweep
	sweepDead    = 64               // dead processes' folders tried at start
	sweepEntries = 256              // folders tried under one dead process's folder
	sweepAge     = 10 * time.Second // a folder younger than this is left alone
	maxIdle      = 4                // empty live groups kept for reuse
)

func (t *tree) rootDir() (string, error) {
	t.rootOnce.Do(func() { t.root, t.rootErr = t.find() })
	return t.root, t.rootErr
}

// find locates this process's cgroup v2 folder and checks, once, that it
// may make cgroups under it and move its children into them.
func (t *tree) find() (string, error) {
	if testLayersEnv != "" && os.Getenv(testLayersEnv) == "none" {
		return "", fmt.Errorf("%w: this test build plays a machine without one (%s=none)", ErrUnavailable, testLayersEnv)
	}
	mi, err := os.ReadFile(filepath.Join(t.proc, "mountinfo"))
	if err != nil {
		return "", fmt.Errorf("%w: read the mount table: %w", ErrUnavailable, err)
	}
	cg, err := os.ReadFile(filepath.Join(t.proc, "cgroup"))
	if err != nil {
		return "", fmt.Errorf("%w: read this process's cgroup: %w", ErrUnavailable, err)
	}
	own, err := parseOwnCgroup(string(cg))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	dir, mt, err := locate(parseMountinfo(string(mi)), own)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if mt.readOnly {
		return "", fmt.Errorf("%w: cgroup v2 at %s is mounted read-only (a container's default): mount it read-write, or delegate a subtree, for command cgroups", ErrUnavailable, mt.point)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("%w: this process's cgroup folder %s is missing", ErrUnavailable, dir)
	}
	// A threaded cgroup holds threads, not processes: a command cannot be
	// born in a cgroup under it.
	if b, err := os.ReadFile(filepath.Join(dir, "cgroup.type")); err == nil {
		if typ := strings.TrimSpace(string(b)); typ == "threaded" || typ == "domain invalid" {
			return "", fmt.Errorf("%w: this process's cgroup %s is %s: processes cannot be moved under it", ErrUnavailable, dir, typ)
		}
	}
	// Making a child needs write on the folder; moving a child process in
	// needs write on cgroup.procs of the common ancestor, this folder.
	for _, p := range []string{dir, filepath.Join(dir, "cgroup.procs")} {
		if err := unix.Access(p, unix.W_OK); err != nil {
			return "", fmt.Errorf("%w: %s is not writable by uid %d (%w): the cgroup is not delegated to this user (under systemd, run yagent in a unit or scope with Delegate=yes, such as systemd-run --user --scope -p Delegate=yes)", ErrUnavailable, p, os.Getuid(), err)
		}
	}
	return filepath.Join(dir, PrefixProcess+strconv.Itoa(t.pid)), nil
}

// ensure makes this process's folder, once, and sweeps what dead processes
// left beside it.
func (t *tree) ensure() (string, error) {
	root, err := t.rootDir()
	if err != nil {
		return "", err
	}
	t.makeOnce.Do(func() {
		if err := unix.Mkdir(root, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			t.makeErr = fmt.Errorf("%w: make %s: %w", ErrUnavailable, root, err)
			return
		}
		sweepDeadProcesses(filepath.Dir(root), t.pid, sweepAge)
	})
	return root, t.makeErr
}

func (t *tree) newGroup(background bool) (*Group, error) {
	root, err := t.ensure()
	if err != nil {
		return nil, err
	}
	t.sweep(false)
	if !background {
		if i, ok := t.takeIdle(); ok {
			return &Group{Path: i.dir, dir: i.dir, fd: i.fd, t: t, n: i.n, v1: i.v1, limits: i.limits, reused: true}, nil
		}
	}
	prefix := PrefixLive
	if background {
		prefix = PrefixBackground
	}
	n := t.next.Add(1)
	p := filepath.Join(root, prefix+strconv.FormatInt(n, 10))
	err = unix.Mkdir(p, 0o755)
	if errors.Is(err, unix.ENOENT) {
		// Cleanup removed the folder (a shutdown raced a start): make it again.
		if err = unix.Mkdir(root, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
			err = unix.Mkdir(p, 0o755)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("make cgroup %s: %w", p, err)
	}
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Rmdir(p)
		return nil, fmt.Errorf("open cgroup %s: %w", p, err)
	}
	return &Group{Path: p, dir: p, fd: fd, t: t, background: background, n: n}, nil
}

func (g *Group) kill() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released {
		return nil // released: what is left outlived its call
	}
	g.killed = true
	err := killDir(g.fd, g.dir, g.forceSignals)
	if err != nil {
		// Every process of the command is in its cgroup v1 groups too:
		// those are killed one by one.
		for _, v := range g.v1 {
			for _, pid := range procsUnder(v.dir, 8) {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
	}
	return err
}

// killDir kills the processes of the cgroup open as fd.
func killDir(fd int, dir string, forceSignals bool) error {
	if !forceSignals {
		err := writeAt(fd, "cgroup.kill", "1")
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("kill cgroup %s: %w", dir, err)
		}
	}
	return signalAll(fd, dir)
}

// Bounds of the fallback kill.
const (
	signalRounds = 200
	signalPause  = time.Millisecond
)

// signalAll is the kill of a kernel without cgroup.kill: freeze the group
// (where cgroup.freeze exists) so nothing in it forks, SIGKILL each of its
// processes until none is left, thaw.
func signalAll(fd int, dir string) error {
	if writeAt(fd, "cgroup.freeze", "1") == nil {
		defer writeAt(fd, "cgroup.freeze", "0")
	}
	for range signalRounds {
		pids := procsUnder(dir, 8)
		if len(pids) == 0 {
			return nil
		}
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		time.Sleep(signalPause)
	}
	return fmt.Errorf("kill cgroup %s: processes %v still there after %d rounds of SIGKILL", dir, procsUnder(dir, 8), signalRounds)
}

// procsUnder lists the processes of the cgroup at dir and of the cgroups
// under it, depth levels down.
func procsUnder(dir string, depth int) []int {
	pids := readProcs(dir)
	if depth == 0 {
		return pids
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			pids = append(pids, procsUnder(filepath.Join(dir, e.Name()), depth-1)...)
		}
	}
	return pids
}

func readProcs(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func (g *Group) signal(sig syscall.Signal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released {
		return
	}
	for _, pid := range procsUnder(g.dir, 8) {
		_ = unix.Kill(pid, sig)
	}
}

func (g *Group) procs() int {
	g.mu.Lock()
	pooled, dir := g.pooled, g.dir
	g.mu.Unlock()
	if pooled {
		return 0 // its folder is another command's now
	}
	return len(procsUnder(dir, 8))
}

func (g *Group) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released {
		return
	}
	g.released = true
	if !g.background && !g.killed && g.fd >= 0 && g.t.putIdle(g) {
		g.fd = -1 // the next command's now, and so is the folder
		g.v1 = nil
		g.pooled = true
		return
	}
	// Its cgroup v1 groups go too, or, with processes left in them, stay
	// until a sweep finds them empty: their bounds hold what is left.
	defer g.dropV1()
	if g.fd >= 0 {
		_ = unix.Close(g.fd)
		g.fd = -1
	}
	err := unix.Rmdir(g.dir)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return
	}
	// Processes are left in it: they live on, in a folder no one kills.
	// The mark says so in a few µs; cgroup v2 refuses rename(2) (EPERM),
	// and moving each process to a kept-N group costs milliseconds (a
	// migration waits for an RCU grace period), so that is the fallback
	// where the mark cannot be set (user xattrs on cgroupfs: Linux 5.7).
	if !g.t.noMark && unix.Setxattr(g.dir, releasedXattr, []byte("1"), 0) == nil {
		g.t.keep(g.dir)
		return
	}
	kept := filepath.Join(filepath.Dir(g.dir), PrefixKept+strconv.FormatInt(g.n, 10))
	if err := move(g.dir, kept, g.boundV2Dir); err == nil {
		g.dir = kept
	} else {
		g.t.keep(kept)
	}
	g.t.keep(g.dir)
}

// Bounds of the move of a released group's processes.
const (
	moveRounds    = 200
	freezeTimeout = 100 * time.Millisecond
)

// move moves every process of the cgroup at from into a new cgroup at to
// and removes from. from is frozen first, so that what is not yet moved
// cannot fork (nor, frozen, exit and free its pid for another process);
// each process thaws as it arrives in to. prep, when set, gives to the
// bounds of from before anything moves.
func move(from, to string, prep func(dir string)) error {
	if err := unix.Mkdir(to, 0o755); err != nil {
		return fmt.Errorf("make cgroup %s: %w", to, err)
	}
	if prep != nil {
		prep(to)
	}
	procs, err := os.OpenFile(filepath.Join(to, "cgroup.procs"), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", to, err)
	}
	defer procs.Close()
	freeze := filepath.Join(from, "cgroup.freeze")
	if os.WriteFile(freeze, []byte("1"), 0) == nil {
		defer os.WriteFile(freeze, []byte("0"), 0)
		waitFrozen(from, freezeTimeout)
	}
	for round := range moveRounds {
		pids := readProcs(from)
		if len(pids) == 0 {
			break
		}
		if round > 0 {
			time.Sleep(signalPause) // one that could not move yet: let it settle
		}
		for _, pid := range pids {
			// One write per pid: the kernel takes one a write. A pid gone
			// meanwhile (ESRCH) needs no move.
			_, _ = procs.WriteString(strconv.Itoa(pid))
		}
	}
	if err := unix.Rmdir(from); err != nil {
		return fmt.Errorf("remove cgroup %s after moving its processes to %s: %w", from, to, err)
	}
	return nil
}

// waitFrozen polls cgroup.events until it says frozen, at most timeout (a
// process in uninterruptible sleep freezes late; the move goes on anyway).
func waitFrozen(dir string, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
		if err != nil || strings.Contains(string(b), "frozen 1") || time.Now().After(deadline) {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// takeIdle hands out an empty live group, if one is kept.
func (t *tree) takeIdle() (idle, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.idle) == 0 {
		return idle{}, false
	}
	i := t.idle[len(t.idle)-1]
	t.idle = t.idle[:len(t.idle)-1]
	return i, true
}

// putIdle keeps g's folder and descriptor for reuse when nothing is left
// in it and there is room.
func (t *tree) putIdle(g *Group) bool {
	if !empty(g.fd) {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.idle) >= maxIdle {
		return false
	}
	t.idle = append(t.idle, idle{dir: g.dir, fd: g.fd, n: g.n, v1: g.v1, limits: g.limits})
	return true
}

// empty reports whether the cgroup open as fd, and every one under it,
// holds no process (cgroup.events says "populated 0").
func empty(fd int) bool {
	efd, err := unix.Openat(fd, "cgroup.events", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(efd)
	var b [256]byte
	n, err := unix.Read(efd, b[:])
	return err == nil && strings.Contains(string(b[:max(n, 0)]), "populated 0")
}

func (t *tree) keep(dir string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.kept = append(t.kept, dir)
}

// sweep removes the kept folders that have emptied: a bounded number, at
// most once per sweepEvery unless all.
func (t *tree) sweep(all bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.kept) == 0 || (!all && time.Since(t.lastSweep) < sweepEvery) {
		return
	}
	t.lastSweep = time.Now()
	n := len(t.kept)
	if !all {
		n = min(n, sweepKept)
	}
	left := t.kept[n:]
	for _, dir := range t.kept[:n] {
		if err := unix.Rmdir(dir); err != nil && !errors.Is(err, unix.ENOENT) {
			left = append(left, dir)
		}
	}
	t.kept = append([]string(nil), left...)
}

func (t *tree) cleanup() {
	root, err := t.rootDir()
	if err != nil {
		return
	}
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, i := range idle {
		_ = unix.Close(i.fd)
		_ = unix.Rmdir(i.dir)
		for _, v := range i.v1 {
			v.close()
			_ = unix.Rmdir(v.dir)
		}
	}
	t.sweep(true)
	_ = unix.Rmdir(root) // fails while groups are in it, as it should
	t.cleanupV1()
}

// sweepDeadProcesses removes the empty folders that processes no longer
// running left under parent (yagent.<pid>/*, then yagent.<pid>), and
// nothing of a live one.
func sweepDeadProcesses(parent string, self int, age time.Duration) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	tried := 0
	for _, e := range entries {
		pid, ok := processFolder(e.Name())
		if !ok || pid == self || !e.IsDir() || processAlive(pid) {
			continue
		}
		if tried++; tried > sweepDead {
			return
		}
		dir := filepath.Join(parent, e.Name())
		kids, _ := os.ReadDir(dir)
		for i, k := range kids {
			if i >= sweepEntries {
				break
			}
			if k.IsDir() && old(filepath.Join(dir, k.Name()), age) {
				_ = unix.Rmdir(filepath.Join(dir, k.Name()))
			}
		}
		if old(dir, age) {
			_ = unix.Rmdir(dir)
		}
	}
}

// processFolder parses yagent.<pid>.
func processFolder(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, PrefixProcess)
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(s)
	return pid, err == nil && pid > 0
}

func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// old reports whether the folder was made more than age ago: a process
// of another pid namespace, alive though its pid is not here, may have
// just made it.
func old(dir string, age time.Duration) bool {
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return false
	}
	return time.Since(time.Unix(st.Ctim.Unix())) >= age
}

func dirOf(pid int) (string, error) {
	dir, err := groupOf(pid)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, PrefixProcess+strconv.Itoa(pid)), nil
}

func killLive(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
		return 0, fmt.Errorf("list the cgroups of %s: %w", dir, err)
	}
	n := 0
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), PrefixLive) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if released(p) {
			continue // what a returned call left
		}
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			if !errors.Is(err, unix.ENOENT) { // released meanwhile
				errs = append(errs, fmt.Errorf("open cgroup %s: %w", p, err))
			}
			continue
		}
		err = killDir(fd, p, false)
		_ = unix.Close(fd)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

func removeEmpty(dir string) bool {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return true
	}
	for i, e := range entries {
		if i >= sweepEntries {
			break
		}
		if e.IsDir() {
			_ = unix.Rmdir(filepath.Join(dir, e.Name())) // EBUSY while something runs in it
		}
	}
	err = unix.Rmdir(dir)
	return err == nil || errors.Is(err, unix.ENOENT)
}

// releasedXattr marks a live-N group that Release found busy: what runs in
// it outlived its call and is never killed.
const releasedXattr = "user.yagent.released"

func released(dir string) bool {
	if strings.HasPrefix(filepath.Base(dir), PrefixKept) {
		return true
	}
	var b [8]byte
	_, err := unix.Getxattr(dir, releasedXattr, b[:])
	return err == nil
}

func groupOf(pid int) (string, error) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("%w: read the mount table: %w", ErrUnavailable, err)
	}
	cg, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return "", fmt.Errorf("read the cgroup of process %d: %w", pid, err)
	}
	own, err := parseOwnCgroup(string(cg))
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	dir, _, err := locate(parseMountinfo(string(mi)), own)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return dir, nil
}

func writeAt(dirfd int, name, value string) error {
	fd, err := unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = unix.Write(fd, []byte(value))
	return err
}
