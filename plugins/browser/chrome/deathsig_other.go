//go:build unix && !linux

package chrome

import "syscall"

// setDeathSignal does nothing outside Linux, which has no parent-death
// signal; the plugin kills the browser's group when it shuts down.
func setDeathSignal(*syscall.SysProcAttr) {}
