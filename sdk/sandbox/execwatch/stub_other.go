//go:build !linux || !(amd64 || arm64)

package execwatch

import (
	"context"
	"errors"
	"os"
	"syscall"
)

var errMissing = errors.New("exec supervision needs Linux on amd64 or arm64: exec rules hold only at parse time here")

func installFilter(Filter) (*os.File, error) { return nil, errMissing }

func supervise(ctx context.Context, listener *os.File, _ Supervision) error {
	if listener != nil {
		listener.Close()
	}
	return errMissing
}

// ThreadProxy is a Proxy served by the thread that made it; there is no
// socket supervision here to use it.
type ThreadProxy struct{}

// NewThreadProxy makes a proxy for the calling thread.
func NewThreadProxy() *ThreadProxy { return &ThreadProxy{} }

// Tid is the serving thread's id.
func (p *ThreadProxy) Tid() int { return 0 }

// Connect is refused here.
func (p *ThreadProxy) Connect(int, []byte) syscall.Errno { return syscall.ENOSYS }

// Serve returns once done is closed.
func (p *ThreadProxy) Serve(done <-chan struct{}) { <-done }
