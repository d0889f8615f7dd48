//go:build !unix

package sdk

import (
	"errors"
	"net"
	"os"
)

func socketPair() (a, b *os.File, err error) {
	return nil, nil, errors.New("no socket pairs on this system: calls go over gRPC")
}

func takeCallChannel() (net.Conn, error) {
	_ = os.Unsetenv(CallChannelEnv)
	return nil, nil
}

// inheritPipe fails where a plugin inherits no descriptors but its
// standard ones: the host uses go-plugin's AutoMTLS there.
func inheritPipe() (r, w *os.File, err error) {
	return nil, nil, errors.New("no inherited descriptors on this system")
}
