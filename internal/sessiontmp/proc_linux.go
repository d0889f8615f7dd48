//go:build linux

package sessiontmp

import (
	"os"
	"strconv"
	"strings"
)

// procStart returns when process pid started (clock ticks since boot, the
// 22nd field of /proc/PID/stat), and whether it is a live process: not
// there, or a zombie, is not.
func procStart(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	// The command name, in parentheses, may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return "", false
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is the state (field 3); the start time is field 22.
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return "", false
	}
	return f[19], true
}
