package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

func (t *tree) enforcements() []Enforcement {
	ways := t.resolvedWays()
	t.bmu.Lock()
	defer t.bmu.Unlock()
	var out []Enforcement
	for _, b := range bounds {
		w := ways[b]
		e := Enforcement{Bound: b}
		switch {
		case !w.ok:
			e.Why = w.why
		case w.v1:
			e.Via, e.Dir = ViaV1, w.base
		default:
			e.Via, e.Dir = ViaV2, w.base
		}
		out = append(out, e)
	}
	return out
}

// resolvedWays finds, once, how each bound reaches this process's
// commands.
func (t *tree) resolvedWays() map[string]*way {
	t.waysOnce.Do(func() { t.ways = t.resolveWays() })
	return t.ways
}

// v2View is what decides whether a controller of cgroup v2 can bound the
// commands: the process's own cgroup v2 folder, its controllers and those
// it enables for its children.
type v2View struct {
	dir         string // this process's cgroup v2 folder
	root        string // the folder of its commands' groups (Root)
	controllers []string
	subtree     []string
	// realRoot: the hierarchy's root cgroup, the one that may hold
	// processes and enable domain controllers (memory) for its children.
	realRoot bool
	// subtreeWritable: its cgroup.subtree_control may be written.
	subtreeWritable bool
}

// v1View is a controller's cgroup v1 hierarchy as this process sees it:
// its cgroup folder there, or why there is none it can use.
type v1View struct {
	own string
	why string
}

func (t *tree) resolveWays() map[string]*way {
	ways := map[string]*way{}
	root, err := t.rootDir()
	if err != nil {
		for _, b := range bounds {
			ways[b] = &way{why: "commands get no cgroup of their own here, so no bound either: " + err.Error()}
		}
		return ways
	}
	own := filepath.Dir(root)
	v2 := v2View{
		dir:             own,
		root:            root,
		controllers:     readFields(filepath.Join(own, "cgroup.controllers")),
		subtree:         readFields(filepath.Join(own, "cgroup.subtree_control")),
		subtreeWritable: unix.Access(filepath.Join(own, "cgroup.subtree_control"), unix.W_OK) == nil,
	}
	// The root cgroup has no cgroup.type (a cgroup namespace's root does).
	if _, err := os.Stat(filepath.Join(own, "cgroup.type")); errors.Is(err, os.ErrNotExist) {
		v2.realRoot = true
	}
	mi, _ := os.ReadFile(filepath.Join(t.proc, "mountinfo"))
	cg, _ := os.ReadFile(filepath.Join(t.proc, "cgroup"))
	mounts := parseV1Mounts(string(mi), bounds...)
	owns := parseOwnV1(string(cg), bounds...)
	// The bounds of one hierarchy share its way.
	byBase := map[string]*way{}
	for _, b := range bounds {
		w := decide(b, v2, v1ViewOf(b, mounts, owns))
		if w.v1 && w.ok {
			if same, ok := byBase[w.base]; ok {
				w = same
			}
			byBase[w.base] = w
		}
		ways[b] = w
	}
	return ways
}

// v1ViewOf finds this process's folder in the cgroup v1 hierarchy of
// controller b, or says why there is none it can use.
func v1ViewOf(b string, mounts map[string]mount, owns map[string]string) v1View {
	m, ok := mounts[b]
	if !ok {
		return v1View{why: fmt.Sprintf("no cgroup v1 %s hierarchy is mounted", b)}
	}
	own, ok := owns[b]
	if !ok {
		return v1View{why: fmt.Sprintf("this process is in no cgroup of the cgroup v1 %s hierarchy at %s", b, m.point)}
	}
	dir, _, err := locate([]mount{m}, own)
	if err != nil {
		return v1View{why: fmt.Sprintf("the cgroup v1 %s hierarchy at %s does not show this process's cgroup %s", b, m.point, own)}
	}
	if m.readOnly {
		return v1View{why: fmt.Sprintf("the cgroup v1 %s hierarchy at %s is mounted read-only", b, m.point)}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return v1View{why: fmt.Sprintf("this process's cgroup v1 %s folder %s is missing", b, dir)}
	}
	for _, p := range []string{dir, filepath.Join(dir, "tasks")} {
		if err := unix.Access(p, unix.W_OK); err != nil {
			return v1View{why: fmt.Sprintf("the cgroup v1 %s hierarchy is there, but %s is not writable by uid %d (%v)", b, p, os.Getuid(), err)}
		}
	}
	return v1View{own: dir}
}

// decide picks how bound b reaches the commands: the
// cgroup v2 controller where its groups can have it (enabled for this
// process's children, or enabled here first: a threaded controller such
// as pids may be beside the processes of a cgroup, a domain one such as
// memory only in the root), else the controller's cgroup v1 hierarchy,
// else none, saying why. The cgroup v1 folder of groups is named like the
// cgroup v2 one, yagent.<pid>.
func decide(b string, v2 v2View, v1 v1View) *way {
	enabled := slices.Contains(v2.subtree, b)
	canEnable := slices.Contains(v2.controllers, b) && v2.subtreeWritable && (b == BoundPids || v2.realRoot)
	switch {
	case enabled || canEnable:
		return &way{ok: true, base: v2.root, enableOwn: !enabled}
	case v1.own != "":
		return &way{ok: true, v1: true, own: v1.own, base: filepath.Join(v1.own, filepath.Base(v2.root))}
	}
	var v2why string
	switch {
	case !slices.Contains(v2.controllers, b):
		v2why = fmt.Sprintf("cgroup v2 has no %s controller for %s (its cgroup.controllers lacks it)", b, v2.dir)
	case !v2.subtreeWritable:
		v2why = fmt.Sprintf("cgroup v2 has the %s controller, but %s/cgroup.subtree_control, which would enable it for the commands' groups, is not writable", b, v2.dir)
	default:
		v2why = fmt.Sprintf("cgroup v2 has the %s controller, but %s does not enable it for its children, and cannot while processes run in it", b, v2.dir)
	}
	return &way{why: fmt.Sprintf("%s, and %s: run yagent in a cgroup whose parent enables the %s controller for it "+
		"(under systemd a unit or scope with Delegate=yes, such as systemd-run --user --scope -p Delegate=yes)", v2why, v1.why, b)}
}

// readFields returns the words of a small file, nil when it cannot be read.
func readFields(p string) []string {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

// usable says w can set its bound (it may have failed since it was
// resolved).
func (t *tree) usable(w *way) bool {
	t.bmu.Lock()
	defer t.bmu.Unlock()
	return w.ok
}

// enableV2 enables controller b for the commands' groups: in the
// cgroup.subtree_control of this process's own cgroup where it is not yet,
// then in that of its folder of groups (which holds no process). Once.
func (t *tree) enableV2(w *way, b string) error {
	root, err := t.ensure()
	if err != nil {
		return err
	}
	t.bmu.Lock()
	defer t.bmu.Unlock()
	if t.v2On[b] {
		return nil
	}
	if !w.ok {
		return errors.New(w.why)
	}
	own := filepath.Dir(root)
	steps := []string{root}
	if w.enableOwn && !slices.Contains(readFields(filepath.Join(own, "cgroup.subtree_control")), b) {
		steps = []string{own, root}
	}
	for _, dir := range steps {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+"+b), 0); err != nil {
			w.ok = false
			w.why = fmt.Sprintf("enabling the cgroup v2 %s controller in %s/cgroup.subtree_control failed (%v)", b, dir, err)
			return errors.New(w.why)
		}
	}
	if t.v2On == nil {
		t.v2On = map[string]bool{}
	}
	t.v2On[b] = true
	return nil
}

// v2Enabled says controller b was enabled for the commands' groups.
func (t *tree) v2Enabled(b string) bool {
	t.bmu.Lock()
	defer t.bmu.Unlock()
	return t.v2On[b]
}

// ensureV1 makes w's folder of groups (once; again if Cleanup removed
// it), sweeping what dead processes left beside it, and opens the tasks
// file the starting thread goes back through.
func (t *tree) ensureV1(w *way) error {
	t.bmu.Lock()
	defer t.bmu.Unlock()
	if !w.ok {
		return errors.New(w.why)
	}
	if _, ok := t.back[w.own]; !ok {
		fd, err := unix.Open(filepath.Join(w.own, "tasks"), unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s/tasks: %w", w.own, err)
		}
		if t.back == nil {
			t.back = map[string]int{}
		}
		t.back[w.own] = fd
	}
	if t.v1Made[w.base] {
		return nil
	}
	if err := unix.Mkdir(w.base, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("make cgroup %s: %w", w.base, err)
	}
	// Each hierarchy has its own dead processes' folders: a plugin that
	// was killed left its groups in every one.
	sweepDeadProcesses(w.own, t.pid, sweepAge)
	if t.v1Made == nil {
		t.v1Made = map[string]bool{}
	}
	t.v1Made[w.base] = true
	return nil
}

// backFD is the tasks file of the cgroup v1 folder own, open for writing.
func (t *tree) backFD(own string) (int, bool) {
	t.bmu.Lock()
	defer t.bmu.Unlock()
	fd, ok := t.back[own]
	return fd, ok
}

// cleanupV1 removes this process's cgroup v1 folders of groups when
// nothing is left in them (Cleanup); the next bounded command makes them
// again.
func (t *tree) cleanupV1() {
	t.bmu.Lock()
	defer t.bmu.Unlock()
	for base := range t.v1Made {
		if unix.Rmdir(base) == nil {
			delete(t.v1Made, base)
		}
	}
}

// maxValue is a bound's value in a limit file: "max" for none.
func maxValue(n int) string {
	if n <= 0 {
		return "max"
	}
	return strconv.Itoa(n)
}

func (g *Group) bound(l Limits) error {
	ways := g.t.resolvedWays()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released {
		return nil
	}
	var errs []error
	var set Limits
	for _, b := range bounds {
		want, had, w := max(l.get(b), 0), g.limits.get(b), ways[b]
		if want == had {
			set.set(b, had)
			continue
		}
		if !g.t.usable(w) {
			continue // missing here: Enforcements says why
		}
		var err error
		switch {
		case !w.v1 && (want > 0 || g.t.v2Enabled(b)):
			if want > 0 {
				err = g.t.enableV2(w, b)
			}
			if err == nil {
				err = boundV2(g.fd, b, want)
			}
		case w.v1:
			err = g.boundV1(w, b, want)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("the %s bound of %s: %w", b, g.dir, err))
			continue
		}
		set.set(b, want)
	}
	g.limits = set
	g.base = Hits{}
	if g.reused {
		g.base = g.readHits()
	}
	return errors.Join(errs...)
}

// boundV2 writes bound b's value n (0: none) into the limit files of the
// cgroup v2 open as dirfd. The memory bound takes the swap with it:
// memory.swap.max is 0 under a bound, where the kernel has swap
// accounting.
func boundV2(dirfd int, b string, n int) error {
	if b == BoundPids {
		return writeAt(dirfd, "pids.max", maxValue(n))
	}
	v := "max"
	if n > 0 {
		v = strconv.FormatInt(int64(n)<<20, 10)
	}
	if err := writeAt(dirfd, "memory.max", v); err != nil {
		return err
	}
	swap := "max"
	if n > 0 {
		swap = "0"
	}
	if err := writeAt(dirfd, "memory.swap.max", swap); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	return nil
}

// boundV2Dir gives the cgroup v2 at dir g's bounds: those of a kept-N
// group its processes move to.
func (g *Group) boundV2Dir(dir string) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	for _, b := range bounds {
		if n := g.limits.get(b); n > 0 && !g.t.resolvedWays()[b].v1 {
			_ = boundV2(fd, b, n)
		}
	}
}

// boundV1 sets bound b to n (0: none) on g's group in w's cgroup v1
// hierarchy, made (named like g) the first time a bound needs it.
func (g *Group) boundV1(w *way, b string, n int) error {
	v := g.v1Of(w)
	if v == nil {
		if n == 0 {
			return nil
		}
		var err error
		if v, err = g.makeV1(w); err != nil {
			return err
		}
	}
	if b == BoundPids {
		return writeAt(v.dirFD, "pids.max", maxValue(n))
	}
	return boundV1Memory(v.dirFD, n)
}

// boundV1Memory sets the memory bound n MiB (0: none) of the cgroup v1
// open as dirfd: memory.limit_in_bytes, and memory.memsw.limit_in_bytes
// (memory and swap) to the same where the kernel accounts swap. The
// kernel keeps memsw at or above memory, so a raise writes memsw first
// and a cut writes it last.
func boundV1Memory(dirfd int, n int) error {
	limit := int64(-1)
	if n > 0 {
		limit = int64(n) << 20
	}
	v := strconv.FormatInt(limit, 10)
	cur := int64(-1)
	if s, err := readAt(dirfd, "memory.limit_in_bytes"); err == nil {
		if c, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && c < 1<<62 {
			cur = c
		}
	}
	raise := limit < 0 || (cur >= 0 && limit > cur)
	memsw := func() error {
		err := writeAt(dirfd, "memory.memsw.limit_in_bytes", v)
		if errors.Is(err, unix.ENOENT) {
			return nil // no swap accounting here
		}
		return err
	}
	if raise {
		if err := memsw(); err != nil {
			return err
		}
	}
	if err := writeAt(dirfd, "memory.limit_in_bytes", v); err != nil {
		return err
	}
	if !raise {
		return memsw()
	}
	return nil
}

// v1Of is g's group in w's hierarchy, nil when it has none.
func (g *Group) v1Of(w *way) *v1group {
	for _, v := range g.v1 {
		if v.way == w {
			return v
		}
	}
	return nil
}

// makeV1 makes g's group in w's hierarchy, named like g: a folder of that
// name a dead process of the same pid left is removed first (it fails
// while something still runs in it).
func (g *Group) makeV1(w *way) (*v1group, error) {
	if err := g.t.ensureV1(w); err != nil {
		return nil, err
	}
	dir := filepath.Join(w.base, filepath.Base(g.Path))
	err := unix.Mkdir(dir, 0o755)
	if errors.Is(err, unix.EEXIST) {
		if err = unix.Rmdir(dir); err == nil {
			err = unix.Mkdir(dir, 0o755)
		}
	}
	if errors.Is(err, unix.ENOENT) {
		// Cleanup removed the folder of groups: make it again.
		g.t.bmu.Lock()
		delete(g.t.v1Made, w.base)
		g.t.bmu.Unlock()
		if err = g.t.ensureV1(w); err == nil {
			err = unix.Mkdir(dir, 0o755)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("make cgroup %s: %w", dir, err)
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Rmdir(dir)
		return nil, fmt.Errorf("open cgroup %s: %w", dir, err)
	}
	tasks, err := unix.Openat(dfd, "tasks", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Close(dfd)
		_ = unix.Rmdir(dir)
		return nil, fmt.Errorf("open %s/tasks: %w", dir, err)
	}
	v := &v1group{way: w, dir: dir, dirFD: dfd, tasks: tasks}
	g.v1 = append(g.v1, v)
	return v, nil
}

func (v *v1group) close() {
	if v.dirFD >= 0 {
		_ = unix.Close(v.dirFD)
		_ = unix.Close(v.tasks)
		v.dirFD, v.tasks = -1, -1
	}
}

// dropV1 lets g's cgroup v1 groups go: each is removed, or, with
// processes left in it, kept for a sweep to remove once empty.
func (g *Group) dropV1() {
	for _, v := range g.v1 {
		v.close()
		if err := unix.Rmdir(v.dir); err != nil && !errors.Is(err, unix.ENOENT) {
			g.t.keep(v.dir)
		}
	}
	g.v1 = nil
}

// joinThread writes "0", the writer itself, into the tasks file of each of
// g's cgroup v1 groups: the thread alone moves (the tasks file, not
// cgroup.procs), without the lock a whole process's move takes. Its
// leave writes "0" into the tasks file of the groups it came from,
// opened before any layer confined the thread (Landlock checks a file as
// it is opened).
func (g *Group) joinThread() (func(), error) {
	g.mu.Lock()
	vs := slices.Clone(g.v1)
	g.mu.Unlock()
	if len(vs) == 0 {
		return func() {}, nil
	}
	backs := make([]int, 0, len(vs))
	leave := func() {
		for _, fd := range backs {
			// A thread that cannot go back stays counted until it ends,
			// which is soon: it is never reused.
			_, _ = unix.Write(fd, []byte("0"))
		}
	}
	for _, v := range vs {
		back, ok := g.t.backFD(v.way.own)
		if !ok {
			leave()
			return nil, fmt.Errorf("join cgroup %s: the way back to %s is not open", v.dir, v.way.own)
		}
		if _, err := unix.Write(v.tasks, []byte("0")); err != nil {
			leave()
			return nil, fmt.Errorf("join cgroup %s: %w", v.dir, err)
		}
		backs = append(backs, back)
	}
	return leave, nil
}

func (g *Group) hits() Hits {
	g.mu.Lock()
	defer g.mu.Unlock()
	h := g.readHits()
	h.Forks = max(h.Forks-g.base.Forks, 0)
	h.OOMKills = max(h.OOMKills-g.base.OOMKills, 0)
	return h
}

// readHits reads the counters of g's bounds now. Held under g.mu.
func (g *Group) readHits() Hits {
	var h Hits
	ways := g.t.resolvedWays()
	for _, b := range bounds {
		if g.limits.get(b) == 0 {
			continue
		}
		w := ways[b]
		file, key := "pids.events", "max"
		if b == BoundMemory {
			file, key = "memory.events", "oom_kill"
			if w.v1 {
				file = "memory.oom_control"
			}
		}
		fd := g.fd
		if w.v1 {
			v := g.v1Of(w)
			if v == nil {
				continue
			}
			fd = v.dirFD
		}
		if fd < 0 {
			continue
		}
		s, err := readAt(fd, file)
		if err != nil {
			continue
		}
		n := counter(s, key)
		if b == BoundPids {
			h.Forks += n
		} else {
			h.OOMKills += n
		}
	}
	return h
}

// counter reads the value of key in a flat keyed file ("max 3\n").
func counter(s, key string) int {
	for line := range strings.SplitSeq(s, "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// readAt reads a small file of the folder open as dirfd.
func readAt(dirfd int, name string) (string, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	var b [512]byte
	n, err := unix.Read(fd, b[:])
	if err != nil {
		return "", err
	}
	return string(b[:n]), nil
}
