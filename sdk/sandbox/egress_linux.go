//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// NewEgressNamespace makes a session's network namespace and its proxy
// listener (127.0.0.1, a port the kernel picks). It needs CAP_SYS_ADMIN,
// as the empty namespace of sandbox.network: off does.
//
// It works on a locked thread that it puts back into its own namespace
// before letting it go. It does not end the thread as the plugin's
// namespaces do: the host's threads fork its plugins, which get a death
// signal when the thread that forked them ends, and any of them may be the
// one the goroutine runs on. Only a thread that cannot go back ends.
func NewEgressNamespace() (*EgressNamespace, error) {
	type res struct {
		e   *EgressNamespace
		err error
	}
	ch := make(chan res, 1)
	go func() {
		runtime.LockOSThread()
		back, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- res{nil, fmt.Errorf("sandbox: the thread's own network namespace: %w", err)}
			return
		}
		defer unix.Close(back)
		e, err := makeEgress()
		if serr := unix.Setns(back, unix.CLONE_NEWNET); serr != nil {
			// Left locked: the thread ends with the goroutine.
			if e != nil {
				e.Close()
			}
			ch <- res{nil, fmt.Errorf("sandbox: back to the host's network namespace: %w", serr)}
			return
		}
		runtime.UnlockOSThread()
		ch <- res{e, err}
	}()
	r := <-ch
	return r.e, r.err
}

// makeEgress runs on a locked thread: it moves the thread into a new
// namespace and makes the listener and the descriptor there.
func makeEgress() (*EgressNamespace, error) {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return nil, fmt.Errorf("sandbox: a network namespace for the session's proxy: unshare: %w", err)
	}
	if err := loopbackUp(); err != nil {
		return nil, err
	}
	// The socket belongs to the namespace of the thread that made it: this
	// one, which the goroutine is locked to.
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("sandbox: the proxy's listener in the session's namespace: %w", err)
	}
	fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("sandbox: the session's network namespace: %w", err)
	}
	ns := os.NewFile(uintptr(fd), "netns")
	return &EgressNamespace{Listener: l, ns: ns, Path: fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), fd)}, nil
}
