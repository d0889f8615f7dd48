//go:build darwin

package sessiontmp

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// procStart returns when process pid started (seconds and microseconds),
// and whether it is a live process (a zombie is not).
func procStart(pid int) (string, bool) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) || kp.Proc.P_stat == 5 { // SZOMB
		return "", false
	}
	t := kp.Proc.P_starttime
	return strconv.FormatInt(int64(t.Sec), 10) + "-" + strconv.FormatInt(int64(t.Usec), 10), true
}
