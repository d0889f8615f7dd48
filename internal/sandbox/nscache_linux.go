//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Making a mount namespace per command (copying the mount table, then
// tearing it down at the command's exit) costs more than the rest of the
// sandbox together, so the namespaces are made once and each command's
// thread enters them with setns: one mount namespace per set of paths
// bound back under /run, rebuilt when the plugin's mount table changes,
// and one empty network namespace with loopback up, which offline
// commands share.

// nsRef is a kept namespace descriptor; refs keeps a replaced one open
// while a thread is entering it.
type nsRef struct {
	fd   int
	refs int
}

type nsCache struct {
	mu     sync.Mutex
	mounts map[string]*nsRef
	order  []string // keys of mounts, oldest first
	net    *nsRef
	// watch is /proc/self/mountinfo, which polls POLLPRI when the
	// plugin's mount table changes; -1 keeps no mount namespace.
	watch int
}

// nsCacheMounts bounds the kept mount namespaces; past it the oldest goes.
const nsCacheMounts = 8

var namespaces = sync.OnceValue(func() *nsCache {
	c := &nsCache{mounts: map[string]*nsRef{}, watch: -1}
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

// mountNS returns the kept mount namespace for bs, made on first use; nil
// when none can be kept (the command then makes its own).
func (c *nsCache) mountNS(hidden []string, bs []backing) (*nsRef, error) {
	if c.watch < 0 {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mountsChanged() {
		for k, r := range c.mounts {
			c.unref(r)
			delete(c.mounts, k)
		}
		c.order = nil
	}
	var key strings.Builder
	for _, b := range bs {
		// Its identity too: a replaced file must be bound anew.
		fmt.Fprintf(&key, "%s\x00%v%v%s\x01", b.path, b.dir, b.write, identity(b.path))
	}
	if r := c.mounts[key.String()]; r != nil {
		r.refs++
		return r, nil
	}
	fd, err := onOwnThread(func() (int, error) {
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			return -1, fmt.Errorf("sandbox: unshare: %w", err)
		}
		// Slave, not private: mounts the plugin's namespace gains later
		// still reach the commands, none of theirs leaks back.
		if err := privateMounts(hidden, bs, unix.MS_SLAVE); err != nil {
			return -1, err
		}
		return unix.Open("/proc/thread-self/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, err
	}
	r := &nsRef{fd: fd, refs: 2}
	c.mounts[key.String()] = r
	c.order = append(c.order, key.String())
	if len(c.order) > nsCacheMounts {
		c.unref(c.mounts[c.order[0]])
		delete(c.mounts, c.order[0])
		c.order = c.order[1:]
	}
	return r, nil
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
func onOwnThread(f func() (int, error)) (int, error) {
	type res struct {
		fd  int
		err error
	}
	ch := make(chan res, 1)
	onThrowawayThread(func() {
		fd, err := f()
		ch <- res{fd, err}
	})
	r := <-ch
	return r.fd, r.err
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
