package proctest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// statFields returns the fields of /proc/pid/stat after the parenthesised
// command name: state, ppid, ...
func statFields(pid string) ([]string, bool) {
	raw, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return nil, false
	}
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	f := strings.Fields(s[i+1:])
	return f, len(f) >= 2
}

// Children returns the PIDs whose parent is pid, with their executable's
// base name.
func Children(pid int) map[int]string {
	out := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, ok := statFields(e.Name())
		if !ok {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
			exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
			out[child] = filepath.Base(exe)
		}
	}
	return out
}

// Alive reports whether pid exists and is not a zombie.
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	f, ok := statFields(strconv.Itoa(pid))
	return !ok || f[0] != "Z"
}
