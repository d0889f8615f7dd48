package guard

import (
	"errors"
	"syscall"
)

// isNotDir reports a lookup through something that is not a folder: the
// path does not exist past that point.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }
