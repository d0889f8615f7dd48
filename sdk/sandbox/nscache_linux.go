//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Making a mount namespace per command (copying the mount table, then
// tearing it down at the command's exit) costs more than the rest of the
// sandbox together, so the namespaces are made once and each command's
// thread enters them with setns: one mount namespace per set of paths
// bound back under /run and session temp folder bound over the temp
// folders (so one per session whose commands have a private /tmp),
// rebuilt when the plugin's mount table changes, and one empty network
// namespace with loopback up, which offline commands share.

// nsRef is a kept namespace descriptor; refs keeps a replaced one open
// while a thread is entering it.
type nsRef struct {
	fd   int
	refs int
}

type nsCache struct {
	mu     sync.Mutex
	mounts map[string]*keptMount
	order  []string // keys of mounts, least recently used first
	net    *nsRef
	// watch is /proc/self/mountinfo, which polls POLLPRI when the
	// plugin's mount table changes; -1 keeps no mount namespace.
	watch int
}

// keptMount is a kept mount namespace and the session temp folder bound
// in it ("" for none).
type keptMount struct {
	ref *nsRef
	tmp string
}

// nsCacheMounts bounds the kept mount namespaces; past it the least
// recently used goes. Each is a copy of the plugin's mount table (a few
// hundred bytes of kernel memory a mount) and one descriptor; a session's
// own goes when its temp folder is forgotten (ForgetTmp), so the bound
// holds the sessions whose commands run now, not all there were.
const nsCacheMounts = 16

var namespaces = sync.OnceValue(func() *nsCache {
	c := &nsCache{mounts: map[string]*keptMount{}, watch: -1}
	// The calling thread's own table: the caller's threads are the
	// plugin's, never a confined one.
	if fd, err := unix.Open("/proc/thread-self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		c.watch = fd
	}
	return c
})

// mountsChanged says the plugin's mount table changed since last asked.
func (c *nsCache) mountsChanged() bool {
	fds := []unix.PollFd{{Fd: int32(c.watch), Events: unix.POLLPRI}}
	n, err := unix.Poll(fds, 0)
	return err != nil || n > 0 && fds[0].Revents&(unix.POLLPRI|unix.POLLERR) != 0
}

// mountNS returns the kept mount namespace for bs and tmp, made on first
// use; nil when none can be kept (the command then makes its own).
func (c *nsCache) mountNS(hidden []string, bs []backing, tmp tmpBind) (*nsRef, error) {
	if c.watch < 0 {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mountsChanged() {
		for k, m := range c.mounts {
			c.unref(m.ref)
			delete(c.mounts, k)
		}
		c.order = nil
	}
	var key strings.Builder
	for _, b := range bs {
		// Its identity too: a replaced file must be bound anew.
		fmt.Fprintf(&key, "%s\x00%v%v%s\x01", b.path, b.dir, b.write, identity(b.path))
	}
	key.WriteString(tmp.key())
	k := key.String()
	if m := c.mounts[k]; m != nil {
		m.ref.refs++
		c.used(k)
		return m.ref, nil
	}
	fd, err := onOwnThread(func() (int, error) {
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			return -1, fmt.Errorf("sandbox: unshare: %w", err)
		}
		// Slave, not private: mounts the plugin's namespace gains later
		// still reach the commands, none of theirs leaks back.
		if err := privateMounts(hidden, bs, tmp, unix.MS_SLAVE); err != nil {
			return -1, err
		}
		return unix.Open("/proc/thread-self/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, err
	}
	r := &nsRef{fd: fd, refs: 2}
	m := &keptMount{ref: r}
	if len(tmp.over) > 0 {
		m.tmp = tmp.dir
	}
	c.mounts[k] = m
	c.order = append(c.order, k)
	if len(c.order) > nsCacheMounts {
		c.drop(c.order[0])
	}
	return r, nil
}

// used moves key k to the back of the order: the most recently used.
func (c *nsCache) used(k string) {
	if i := slices.Index(c.order, k); i >= 0 && i < len(c.order)-1 {
		c.order = append(slices.Delete(c.order, i, i+1), k)
	}
}

// drop forgets the kept mount namespace of key k; a command entering it
// now still holds it.
func (c *nsCache) drop(k string) {
	if m := c.mounts[k]; m != nil {
		c.unref(m.ref)
		delete(c.mounts, k)
	}
	c.order = slices.DeleteFunc(c.order, func(o string) bool { return o == k })
}

// forgetTmp drops every kept mount namespace that binds dir.
func (c *nsCache) forgetTmp(dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, m := range c.mounts {
		if m.tmp == dir {
			c.drop(k)
		}
	}
}

// netNS returns the empty network namespace, made on first use.
func (c *nsCache) netNS() (*nsRef, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.net == nil {
		fd, err := onOwnThread(func() (int, error) {
			if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
				return -1, fmt.Errorf("sandbox: unshare: %w", err)
			}
			if err := loopbackUp(); err != nil {
				return -1, err
			}
			return unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		})
		if err != nil {
			return nil, err
		}
		c.net = &nsRef{fd: fd, refs: 1}
	}
	c.net.refs++
	return c.net, nil
}

// netFor returns the network namespace a command of p without the
// network enters: the session's (p.NetNS) under sandbox.network: proxy,
// opened for this command, else the empty one.
func (c *nsCache) netFor(p Policy) (*nsRef, error) {
	if p.NetNS == "" {
		return c.netNS()
	}
	fd, err := unix.Open(p.NetNS, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the session's network namespace: %w", err)
	}
	return &nsRef{fd: fd, refs: 1}, nil
}

func (c *nsCache) release(r *nsRef) {
	if r == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unref(r)
}

func (c *nsCache) unref(r *nsRef) {
	if r.refs--; r.refs == 0 {
		unix.Close(r.fd)
	}
}

// onOwnThread runs f on a throwaway thread, so the namespaces f enters
// never reach another goroutine.
func onOwnThread[T any](f func() (T, error)) (T, error) {
	type res struct {
		v   T
		err error
	}
	ch := make(chan res, 1)
	onThrowawayThread(func() {
		v, err := f()
		ch <- res{v, err}
	})
	r := <-ch
	return r.v, r.err
}

// onThrowawayThread runs f in a goroutine locked to a thread that is not
// the main one and ends with the goroutine (never unlocked), so the state
// f gives the thread is never reused. The main thread is kept out: Go
// parks it rather than ending it, and its /proc/self is the process's.
// The goroutine is a new one, not a thread kept waiting: the caller
// blocks for it, so it runs at once on the caller's own thread, where
// waking a waiting locked thread costs two thread switches (measured:
// 110 µs against 35 µs a command).
func onThrowawayThread(f func()) {
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			// Still unchanged: hold it while another thread does the
			// work, then give it back.
			done := make(chan struct{})
			onThrowawayThread(func() { defer close(done); f() })
			<-done
			runtime.UnlockOSThread()
			return
		}
		f()
	}()
}

// enter puts the calling, locked thread into the kept namespace r of type
// nstype (CLONE_NEWNS or CLONE_NEWNET).
func enter(r *nsRef, nstype int) error {
	if nstype == unix.CLONE_NEWNS {
		// setns into a mount namespace needs a thread of its own fs.
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			return fmt.Errorf("sandbox: unshare fs: %w", err)
		}
	}
	if err := unix.Setns(r.fd, nstype); err != nil {
		return fmt.Errorf("sandbox: entering namespace %s: %w", strconv.Itoa(nstype), err)
	}
	return nil
}
