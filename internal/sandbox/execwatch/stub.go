package execwatch

import (
	"context"
	"errors"
	"os"
)

var errMissing = errors.New("exec supervision is not built into this yagent yet")

func installFilter() (*os.File, error) { return nil, errMissing }

func supervise(ctx context.Context, listener *os.File, judge Judge) error {
	if listener != nil {
		listener.Close()
	}
	return errMissing
}
