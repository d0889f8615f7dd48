//go:build !linux

package sandbox

import (
	"maps"
	"os/exec"
	"runtime"
	"sync"
)

// probe reports every layer missing: they are Linux kernel features.
func probe() Layers {
	l := probeOnce()
	l.Missing = maps.Clone(l.Missing)
	return l
}

var probeOnce = sync.OnceValue(func() Layers {
	return noLayers(systemName(runtime.GOOS), " (a Linux kernel layer): run yagent in a Linux VM or container to have it")
})

// systemName is how users call the system goos names.
func systemName(goos string) string {
	switch goos {
	case "darwin":
		return "macOS"
	case "freebsd":
		return "FreeBSD"
	case "openbsd":
		return "OpenBSD"
	case "netbsd":
		return "NetBSD"
	case "windows":
		return "Windows"
	}
	return goos
}

// start starts cmd as it is: there is no layer to apply. The shell plugin
// still gives it a process group of its own.
func start(cmd *exec.Cmd, _ Policy) (*Started, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Started{Applied: probe()}, nil
}

// forgetTmp has nothing to let go: no namespace is kept here.
func forgetTmp(string) {}
