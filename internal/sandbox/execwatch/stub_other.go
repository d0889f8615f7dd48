//go:build !linux || !(amd64 || arm64)

package execwatch

import (
	"context"
	"errors"
	"os"
)

var errMissing = errors.New("exec supervision needs Linux on amd64 or arm64: exec rules hold only at parse time here")

func installFilter(Filter) (*os.File, error) { return nil, errMissing }

func supervise(ctx context.Context, listener *os.File, judge Judge, refused func(Refusal)) error {
	if listener != nil {
		listener.Close()
	}
	return errMissing
}
