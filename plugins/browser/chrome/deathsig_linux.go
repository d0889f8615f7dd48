package chrome

import "syscall"

// setDeathSignal has the kernel SIGKILL the browser when the thread that
// started it dies; chromedp starts the browser from a goroutine locked to
// its thread until the browser exits, so that thread lives as long as the
// plugin does.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
