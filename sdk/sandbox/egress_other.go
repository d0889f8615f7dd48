//go:build !linux

package sandbox

import (
	"errors"
	"runtime"
)

// NewEgressNamespace fails: network namespaces are a Linux kernel layer.
// The host then serves the session's proxy on the machine's loopback.
func NewEgressNamespace() (*EgressNamespace, error) {
	return nil, errors.New("sandbox: no network namespace on " + systemName(runtime.GOOS) + ": commands find the session's proxy by its variables only")
}
