//go:build unix

package sdk

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
)

// socketPair returns the two ends of a new stream socket pair, both closed
// on exec.
func socketPair() (a, b *os.File, err error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "call-channel"), os.NewFile(uintptr(fds[1]), "call-channel-plugin"), nil
}

// takeCallChannel returns the plugin's end of the call channel the host
// named in CallChannelEnv, or nil when it named none. The variable goes
// from the environment and the descriptor is closed on exec before
// anything else can start a command: no command the plugin runs inherits
// either.
func takeCallChannel() (net.Conn, error) {
	raw, ok := os.LookupEnv(CallChannelEnv)
	if !ok {
		return nil, nil
	}
	_ = os.Unsetenv(CallChannelEnv)
	fd, err := strconv.Atoi(raw)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("%s=%q is not a descriptor the host could have passed", CallChannelEnv, raw)
	}
	syscall.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "call-channel")
	defer f.Close()
	conn, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("call channel (fd %d): %w", fd, err)
	}
	return conn, nil
}
