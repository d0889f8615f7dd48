//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// keptCaps are the capabilities a command keeps: those a build or a
// package install run as root needs to own and change its files. Not
// CAP_FSETID: without it the kernel clears the setuid and setgid bits of
// a file whose content or owner a command changes, so a set-id file a
// command may write (one unpacked into the workspace) cannot be given new
// content with its bit; the seccomp filter refuses every new set-id mode.
const keptCaps = 1<<unix.CAP_CHOWN | 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_FOWNER |
	1<<unix.CAP_SETUID | 1<<unix.CAP_SETGID

var capLast = sync.OnceValue(func() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if n, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
		return n
	}
	return 63
})

// dropCaps leaves the calling thread keptCaps at most: bounding set (when
// it may change it), ambient, effective, permitted and inheritable.
func dropCaps() error {
	for c := 0; c <= capLast(); c++ {
		if keptCaps&(1<<c) != 0 {
			continue
		}
		// EPERM without CAP_SETPCAP: a thread that holds no capability
		// gains none from the bounding set under no_new_privs.
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EPERM && err != unix.EINVAL {
			return fmt.Errorf("sandbox: dropping capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("sandbox: clearing ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: reading capabilities: %w", err)
	}
	for i := range data {
		keep := uint32(uint64(keptCaps) >> (32 * i))
		data[i].Permitted &= keep
		data[i].Effective &= data[i].Permitted
		data[i].Inheritable &= data[i].Permitted
	}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("sandbox: dropping capabilities: %w", err)
	}
	return nil
}

// hiddenDirs are /run and /var/run as real folders, each once.
var hiddenDirs = sync.OnceValue(func() []string {
	var ds []string
	for _, d := range []string{"/run", "/var/run"} {
		r, err := filepath.EvalSymlinks(d)
		if err != nil || slices.Contains(ds, r) {
			continue
		}
		if fi, err := os.Stat(r); err == nil && fi.IsDir() {
			ds = append(ds, r)
		}
	}
	return ds
})

// emptyRun is one empty tmpfs, detached, that each command's mount
// namespace gets a clone of over /run and /var/run: one Landlock rule on
// its root lets commands list it (a rule on the covered /run would not
// apply), and no superblock is made per command. The plugin keeps the
// original; each clone is read-only once the paths bound back into it
// have their mount points.
type emptyRun struct {
	fd int // -1 where the kernel cannot make or clone it
}

var sharedRun = sync.OnceValue(func() *emptyRun {
	e := &emptyRun{fd: -1}
	fs, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return e
	}
	defer unix.Close(fs)
	if unix.FsconfigSetString(fs, "mode", "0755") != nil || unix.FsconfigSetString(fs, "size", "64k") != nil || unix.FsconfigCreate(fs) != nil {
		return e
	}
	fd, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return e
	}
	// Kernels before detached trees could be cloned refuse this; they get
	// a fresh tmpfs per command.
	c, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if err != nil {
		unix.Close(fd)
		return e
	}
	unix.Close(c)
	e.fd = fd
	return e
})

// backing is a granted path under a hidden folder, bound back into the
// tmpfs over it.
type backing struct {
	path  string
	dir   bool
	write bool
}

// backings are the rules of rs under hidden, which the tmpfs would hide.
func backings(rs *ruleset, hidden []string) []backing {
	var bs []backing
	for r := range rs.each() {
		for _, h := range hidden {
			if r.Path == h || !policy.Within(h, r.Path, true) {
				continue
			}
			fi, err := os.Stat(r.Path)
			if err != nil {
				continue
			}
			bs = append(bs, backing{r.Path, fi.IsDir(), r.Access&accessWriteFile != 0})
		}
	}
	return bs
}

// tmpBind is a session's own temp folder and the machine's temp folders
// it is bound over (Policy.Tmp, Policy.TmpOver).
type tmpBind struct {
	dir  string
	over []string
}

// tmpOf is the bind p asks for: only the machine's temp folders that are
// folders of their own name (a symlinked /dev/shm is left alone), and
// nothing without a temp folder.
func tmpOf(p Policy) tmpBind {
	if p.Tmp == "" || !filepath.IsAbs(p.Tmp) {
		return tmpBind{}
	}
	t := tmpBind{dir: filepath.Clean(p.Tmp)}
	for _, o := range p.TmpOver {
		if !slices.Contains(sdk.TempRoots(), o) || slices.Contains(t.over, o) {
			continue
		}
		if fi, err := os.Lstat(o); err == nil && fi.IsDir() {
			t.over = append(t.over, o)
		}
	}
	return t
}

// key names t in the kept namespaces' key: the folder's identity too, so
// a folder removed and made again is bound anew.
func (t tmpBind) key() string {
	if len(t.over) == 0 {
		return ""
	}
	return "\x02" + t.dir + identity(t.dir) + "\x00" + strings.Join(t.over, "\x00")
}

// privateMounts makes the calling thread's new mount namespace private
// and covers /run and /var/run with an empty read-only tmpfs, so no
// socket of the init system or a container engine is reachable. A granted
// path under them (an /etc/resolv.conf that links into /run) is bound
// back into the tmpfs. The session's temp folder, when tmp names one, is
// bound over the temp folders it stands for.
func privateMounts(hidden []string, bs []backing, tmp tmpBind, propagation uintptr) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|propagation, ""); err != nil {
		return fmt.Errorf("sandbox: making mounts private: %w", err)
	}
	if len(tmp.over) > 0 {
		// Opened first: the folder may lie under one of the folders it
		// covers, or under /run.
		fd, err := unix.Open(tmp.dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("sandbox: opening the session's temp folder %s: %w", tmp.dir, err)
		}
		err = bindTmp(fd, tmp.over)
		unix.Close(fd)
		if err != nil {
			return err
		}
	}
	e := sharedRun()
	for _, h := range hidden {
		// Opened before the tmpfs hides them.
		fds := make([]int, len(bs))
		for i, b := range bs {
			fds[i] = -1
			if policy.Within(h, b.path, true) {
				fds[i], _ = unix.Open(b.path, unix.O_PATH|unix.O_CLOEXEC, 0)
			}
		}
		err := coverWithTmpfs(e, h)
		for i, b := range bs {
			if fds[i] < 0 {
				continue
			}
			if err == nil {
				err = bindBack(fds[i], b.path, b.dir, b.write)
			}
			unix.Close(fds[i])
		}
		if err != nil {
			return err
		}
		if err := unix.Mount("", h, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|tmpfsFlags, ""); err != nil {
			return fmt.Errorf("sandbox: making the tmpfs over %s read-only: %w", h, err)
		}
	}
	return nil
}

const tmpfsFlags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC

// bindTmp binds the folder open as fd over each of over, without set-id
// programs or devices: what was there (the machine's files and sockets)
// is out of the namespace's reach.
func bindTmp(fd int, over []string) error {
	src := "/proc/thread-self/fd/" + strconv.Itoa(fd)
	for _, o := range over {
		if err := unix.Mount(src, o, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("sandbox: binding the session's temp folder over %s: %w", o, err)
		}
		if err := unix.Mount("", o, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			return fmt.Errorf("sandbox: the session's temp folder over %s: %w", o, err)
		}
	}
	return nil
}

// coverWithTmpfs mounts a clone of the shared tmpfs on h, or a fresh one.
func coverWithTmpfs(e *emptyRun, h string) error {
	if e.fd >= 0 {
		c, err := unix.OpenTree(e.fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
		if err == nil {
			err = unix.MoveMount(c, "", unix.AT_FDCWD, h, unix.MOVE_MOUNT_F_EMPTY_PATH)
			unix.Close(c)
		}
		if err != nil {
			return fmt.Errorf("sandbox: hiding %s: %w", h, err)
		}
		return nil
	}
	if err := unix.Mount("tmpfs", h, "tmpfs", tmpfsFlags, "mode=0755,size=16k"); err != nil {
		return fmt.Errorf("sandbox: hiding %s: %w", h, err)
	}
	return nil
}

// bindBack binds the file or folder fd (opened before the tmpfs hid it) at
// path in the tmpfs.
func bindBack(fd int, path string, dir, write bool) error {
	if _, err := os.Lstat(path); err != nil {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("sandbox: keeping %s: %w", path, err)
		}
		var err error
		if dir {
			err = os.Mkdir(path, 0o755)
		} else if f, ferr := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o644); ferr == nil {
			f.Close()
		} else {
			err = ferr
		}
		if err != nil && !os.IsExist(err) {
			return fmt.Errorf("sandbox: keeping %s: %w", path, err)
		}
	}
	src := "/proc/thread-self/fd/" + strconv.Itoa(fd)
	if err := unix.Mount(src, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("sandbox: binding %s back: %w", path, err)
	}
	if !write {
		if err := unix.Mount("", path, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			return fmt.Errorf("sandbox: making %s read-only: %w", path, err)
		}
	}
	return nil
}

// loopbackUp brings lo up in the calling thread's network namespace.
func loopbackUp() error {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: loopback: %w", err)
	}
	defer unix.Close(s)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("sandbox: loopback: %w", err)
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("sandbox: reading the loopback flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("sandbox: bringing the loopback up: %w", err)
	}
	return nil
}
