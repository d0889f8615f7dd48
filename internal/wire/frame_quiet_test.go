//go:build linux

package wire

import (
	"net"
	"testing"

	"github.com/yagent/yagent/internal/quietio"
)

// TestNewFrameConn_RawOnTheCallChannel: the call channel's frames are read
// and written with raw system calls (internal/quietio), which spare each
// crossing a wake-up of the runtime's monitor thread.
func TestNewFrameConn_RawOnTheCallChannel(t *testing.T) {
	a, b, err := SocketPair()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	c, err := net.FileConn(a)
	a.Close()
	if err != nil {
		t.Fatal(err)
	}
	fc := NewFrameConn(c)
	defer fc.Close()
	if !quietio.Quiet(fc.conn) {
		t.Errorf("the call channel's conn is %T, not read with raw system calls", fc.conn)
	}
}
