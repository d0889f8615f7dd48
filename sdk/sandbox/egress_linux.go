//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// NewEgressNamespace makes a session's network namespace and its proxy
// listener (127.0.0.1, a port the kernel picks). It needs CAP_SYS_ADMIN,
// as the empty namespace of sandbox.network: off does.
func NewEgressNamespace() (*EgressNamespace, error) {
	return onOwnThread(makeEgress)
}

// makeEgress runs on a throwaway thread: the namespace it enters goes with
// the thread, the listener and the descriptor stay.
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
