//go:build unix

package wire

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
)

// SocketPair returns the two ends of a new stream socket pair, both closed
// on exec.
func SocketPair() (a, b *os.File, err error) {
	fds, err := socketpairCloexec()
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "call-channel"), os.NewFile(uintptr(fds[1]), "call-channel-plugin"), nil
}

// TakeCallChannel returns the plugin's end of the call channel the host
// named in CallChannelEnv, or nil when it named none. No command the
// plugin runs inherits the variable or the descriptor.
func TakeCallChannel() (net.Conn, error) {
	f, err := takeInherited(CallChannelEnv, "call-channel")
	if f == nil || err != nil {
		return nil, err
	}
	defer f.Close()
	conn, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("call channel (fd %d): %w", f.Fd(), err)
	}
	return conn, nil
}

// takeInherited returns the descriptor the host passed and named in the
// variable env, or nil when it named none. The variable goes from the
// environment and the descriptor is closed on exec before anything else
// can start a command: no command the plugin runs inherits either.
func takeInherited(env, name string) (*os.File, error) {
	raw, ok := os.LookupEnv(env)
	if !ok {
		return nil, nil
	}
	_ = os.Unsetenv(env)
	fd, err := strconv.Atoi(raw)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q is not a descriptor the host could have passed", env, raw)
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), name), nil
}

// InheritPipe is a pipe whose read end a plugin can inherit.
func InheritPipe() (r, w *os.File, err error) { return os.Pipe() }
