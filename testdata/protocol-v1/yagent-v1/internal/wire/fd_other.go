//go:build !unix

package wire

import (
	"errors"
	"net"
	"os"
)

// SocketPair fails where the system has no socket pairs: calls go over
// gRPC there.
func SocketPair() (a, b *os.File, err error) {
	return nil, nil, errors.New("no socket pairs on this system: calls go over gRPC")
}

// TakeCallChannel finds no call channel where the system passes none.
func TakeCallChannel() (net.Conn, error) {
	_ = os.Unsetenv(CallChannelEnv)
	return nil, nil
}

// InheritPipe fails where a plugin inherits no descriptors but its
// standard ones: the host uses go-plugin's AutoMTLS there.
func InheritPipe() (r, w *os.File, err error) {
	return nil, nil, errors.New("no inherited descriptors on this system")
}
