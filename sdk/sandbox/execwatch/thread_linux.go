//go:build linux

package execwatch

import (
	"errors"
	"runtime"

	"golang.org/x/sys/unix"
)

var errMainThread = errors.New("execwatch: the exec filter cannot go on the main thread (Go never ends it, so the tree would never be seen to exit): install it inside RunLocked")

// RunLocked runs fn on an OS thread locked to it for good and waits for it:
// when fn returns, Go ends the thread, so whatever fn applied to it (a
// filter, a Landlock domain, dropped capabilities) is never reused. The
// thread is never the process's main thread, which Go cannot end: a filter
// left there would keep its listener from ever reporting that the tree
// has exited.
func RunLocked(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked on the thread fn runs on
		if unix.Gettid() != unix.Getpid() {
			fn()
			return
		}
		// Holding the main thread while a new goroutine locks one of its
		// own keeps the new one off it.
		inner := make(chan struct{})
		go func() {
			defer close(inner)
			runtime.LockOSThread()
			fn()
		}()
		<-inner
		runtime.UnlockOSThread()
	}()
	<-done
}
