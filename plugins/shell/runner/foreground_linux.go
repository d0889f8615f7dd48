package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// foregroundOf returns the program that reads what is typed into the
// terminal whose master is master: the terminal's foreground process group
// (tcgetpgrp), and in it every live process. The reader counts as a shell
// only when every one of them runs a shell's file: a shell without job
// control (bash -c 'cd x; python3') keeps its child in its own group, and
// the child, not the shell, reads the line.
func foregroundOf(master *os.File) foreground {
	pgrp, ok := terminalPgrp(master)
	if !ok {
		return foreground{}
	}
	return groupProgram(pgrp, shellFiles())
}

// terminalPgrp is tcgetpgrp on the master side (Linux answers for the
// slave), through SyscallConn so the descriptor stays non-blocking.
func terminalPgrp(master *os.File) (int, bool) {
	rc, err := master.SyscallConn()
	if err != nil {
		return 0, false
	}
	var pgrp int32
	var ioErr syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, ioErr = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pgrp)))
	}); err != nil || ioErr != 0 || pgrp <= 0 {
		return 0, false
	}
	return int(pgrp), true
}

// groupProgram identifies the live processes of process group pgrp.
func groupProgram(pgrp int, shells map[fileKey]bool) foreground {
	members := groupMembers(pgrp)
	if len(members) == 0 {
		return foreground{pgrp: pgrp}
	}
	fg := foreground{pgrp: pgrp, shell: true}
	var shellPath, busyPath string
	for _, pr := range members {
		exe := filepath.Join("/proc", strconv.Itoa(pr.pid), "exe")
		path, _ := os.Readlink(exe)
		key, ok := statKey(exe)
		switch {
		case !ok || !shells[key]:
			fg.shell = false
			if fg.program == "" {
				fg.program, fg.reading = path, pr.readsInput()
			}
		case !pr.waitsForInput():
			// A shell running a command, or waiting for one it started,
			// is not what reads the next line: the command is.
			fg.shell = false
			if busyPath == "" {
				busyPath = path + " (busy with a command it runs)"
			}
		case shellPath == "":
			shellPath = path
		}
	}
	switch {
	case fg.shell:
		fg.program, fg.reading = shellPath, true
	case fg.program == "":
		fg.program = busyPath
	}
	if fg.program == "" {
		fg.shell = false
	}
	return fg
}

// proc is one process of a foreground group.
type proc struct {
	pid   int
	state byte // R, S, D, T...
}

// waitsForInput reports whether p sleeps on something other than its
// children: at its prompt, or in a read.
func (p proc) waitsForInput() bool {
	if p.state != 'S' {
		return false
	}
	w, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.pid), "wchan"))
	return err != nil || string(bytes.TrimSpace(w)) != "do_wait"
}

// readsInput reports whether p sleeps where a program waiting for input
// does (a read of the terminal, poll, select). Unknown is no: only a
// deny check depends on it.
func (p proc) readsInput() bool {
	if p.state != 'S' {
		return false
	}
	w, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.pid), "wchan"))
	if err != nil {
		return false
	}
	switch wchan := string(bytes.TrimSpace(w)); {
	case wchan == "wait_woken", wchan == "n_tty_read", wchan == "do_select", wchan == "do_sys_poll",
		wchan == "ep_poll", wchan == "core_sys_select", strings.HasPrefix(wchan, "poll_schedule_timeout"):
		return true
	}
	return false
}

// groupMembers lists the processes of group pgrp that have not exited,
// leader first.
func groupMembers(pgrp int) []proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 || string(f[0]) == "Z" || string(f[0]) == "X" {
			continue
		}
		if g, err := strconv.Atoi(string(f[2])); err != nil || g != pgrp {
			continue
		}
		pr := proc{pid: pid, state: f[0][0]}
		if pid == pgrp {
			out = append([]proc{pr}, out...)
		} else {
			out = append(out, pr)
		}
	}
	return out
}

// fileKey identifies a file by device and inode: a copy of another program
// under a shell's name is not a shell, a hard link to one is.
type fileKey struct{ dev, ino uint64 }

func statKey(path string) (fileKey, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return fileKey{}, false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileKey{}, false
	}
	return fileKey{dev: uint64(sys.Dev), ino: sys.Ino}, true
}

// shellNames are the shells whose input the host's command check can read
// (bash's grammar and its POSIX relatives). fish, csh and the like are
// not among them: their input asks like any program's.
var shellNames = map[string]bool{
	"bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true, "ksh93": true,
	"mksh": true, "ash": true, "posh": true, "yash": true,
}

var (
	shellFilesOnce sync.Once
	shellFilesSet  map[fileKey]bool
)

// shellFiles are the files of the shells installed: /etc/shells and the
// usual folders, each resolved, kept when the file it resolves to is named
// like a shell.
func shellFiles() map[fileKey]bool {
	shellFilesOnce.Do(func() {
		shellFilesSet = map[fileKey]bool{}
		var candidates []string
		if b, err := os.ReadFile("/etc/shells"); err == nil {
			for _, line := range bytes.Split(b, []byte("\n")) {
				if line = bytes.TrimSpace(line); len(line) > 0 && line[0] == '/' {
					candidates = append(candidates, string(line))
				}
			}
		}
		for _, dir := range []string{"/bin", "/usr/bin", "/usr/local/bin"} {
			for name := range shellNames {
				candidates = append(candidates, filepath.Join(dir, name))
			}
		}
		for _, c := range candidates {
			real, err := filepath.EvalSymlinks(c)
			if err != nil || !shellNames[filepath.Base(real)] {
				continue
			}
			if key, ok := statKey(real); ok {
				shellFilesSet[key] = true
			}
		}
	})
	return shellFilesSet
}
