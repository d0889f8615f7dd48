//go:build linux && (amd64 || arm64)

package localstat

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Lstat is os.Lstat: a raw system call where every mount on the way to
// name is local, os.Lstat elsewhere. The FileInfo's Sys is a
// *syscall.Stat_t, as os's is; os.SameFile does not take it (compare the
// device and inode, filestat.Inode).
func Lstat(name string) (fs.FileInfo, error) {
	if !mounts.local(name) {
		return os.Lstat(name)
	}
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	fi := &fileInfo{name: filepath.Base(name)}
	for {
		_, _, e := syscall.RawSyscall6(sysFstatat, atFDCWD, uintptr(unsafe.Pointer(p)),
			uintptr(unsafe.Pointer(&fi.sys)), atSymlinkNoFollow, 0, 0)
		switch e {
		case 0:
			return fi, nil
		case syscall.EINTR:
			continue
		}
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: e}
	}
}

// LstatNoLinks is Lstat of the absolute, clean path name when no
// component of it is a symlink, the last included: the kernel resolves the
// whole path in one openat2 that refuses symlinks (RESOLVE_NO_SYMLINKS,
// O_PATH, O_NOFOLLOW), and the descriptor is read with fstat. A resolution
// without symlinks crosses only the mounts on the path as written, so it
// is made only where every one is local, as Lstat is. ok is false when a
// component is a symlink, is missing or cannot be read, a mount on the way
// is not local, or the kernel has no openat2: the caller walks the path
// itself, one component at a time.
func LstatNoLinks(name string) (fi fs.FileInfo, ok bool) {
	if noOpenat2.Load() || !mounts.local(name) {
		return nil, false
	}
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return nil, false
	}
	how := unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	var fd uintptr
	e := syscall.EINTR
	for e == syscall.EINTR {
		fd, _, e = syscall.RawSyscall6(unix.SYS_OPENAT2, atFDCWD, uintptr(unsafe.Pointer(p)),
			uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
	}
	switch e {
	case 0:
	case syscall.ENOSYS, syscall.EINVAL, syscall.E2BIG, syscall.EPERM:
		// Before Linux 5.6, or a filter that refuses it.
		noOpenat2.Store(true)
		return nil, false
	default:
		return nil, false
	}
	info := &fileInfo{name: filepath.Base(name)}
	_, _, e = syscall.RawSyscall(syscall.SYS_FSTAT, fd, uintptr(unsafe.Pointer(&info.sys)), 0)
	syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	// With O_PATH and O_NOFOLLOW a symlink last is opened itself rather
	// than refused: it is one too.
	if e != 0 || info.sys.Mode&syscall.S_IFMT == syscall.S_IFLNK {
		return nil, false
	}
	return info, true
}

// noOpenat2 is set once the kernel refuses openat2: LstatNoLinks answers
// nothing from then on.
var noOpenat2 atomic.Bool

// Readlink is os.Readlink: a raw system call where every mount on the way
// to name is local, os.Readlink elsewhere.
func Readlink(name string) (string, error) {
	if !mounts.local(name) {
		return os.Readlink(name)
	}
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	size := 256
	for {
		buf := make([]byte, size)
		n, _, e := syscall.RawSyscall6(syscall.SYS_READLINKAT, atFDCWD, uintptr(unsafe.Pointer(p)),
			uintptr(unsafe.Pointer(&buf[0])), uintptr(size), 0, 0)
		switch {
		case e == syscall.EINTR:
			continue
		case e != 0:
			return "", &fs.PathError{Op: "readlink", Path: name, Err: e}
		case int(n) < size:
			return string(buf[:n]), nil
		}
		size *= 2 // the target may be longer than the buffer: read it again
	}
}

// Local reports whether every mount on the way to the absolute, clean
// path p is of a local file system, as the mount table says now: a raw
// system call on p returns.
func Local(p string) bool { return mounts.local(p) }

// Info is the FileInfo of a stat a raw system call filled, as os reports
// it, named name (a base name).
func Info(name string, st *syscall.Stat_t) fs.FileInfo {
	return &fileInfo{name: name, sys: *st}
}

// atFDCWD is AT_FDCWD (-100) as the system call takes it.
const atFDCWD = ^uintptr(0x63)

// atSymlinkNoFollow is AT_SYMLINK_NOFOLLOW: the last component is not followed.
const atSymlinkNoFollow = 0x100

// mounts is this process's mount table, read on first use and again after
// each change the kernel reports.
var mounts = &watched{path: "/proc/self/mountinfo"}

// watched is a mount table kept current: the kernel marks an open
// /proc/self/mountinfo with POLLPRI after each mount or unmount in the
// process's namespace, which a raw poll that does not wait reads.
type watched struct {
	path string

	mu     sync.Mutex
	opened bool
	fd     int // -1: no table can be read here: every path takes os
	tab    table
}

// local reports whether p may take the raw path.
func (w *watched) local(p string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.opened {
		w.opened = true
		w.fd = -1
		if f, err := syscall.Open(w.path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0); err == nil {
			w.fd = f
			w.reload()
		}
	}
	if w.fd < 0 {
		return false
	}
	if w.changed() {
		w.reload()
	}
	return w.fd >= 0 && w.tab.local(p)
}

// changed polls the table's descriptor without waiting.
func (w *watched) changed() bool {
	pfd := struct {
		fd      int32
		events  int16
		revents int16
	}{fd: int32(w.fd), events: pollPRI}
	var zero syscall.Timespec
	for {
		n, _, e := syscall.RawSyscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1,
			uintptr(unsafe.Pointer(&zero)), 0, 0, 0)
		switch {
		case e == syscall.EINTR:
			continue
		case e != 0:
			return true // cannot tell: read the table again
		}
		return n > 0 && pfd.revents&(pollPRI|pollERR) != 0
	}
}

const (
	pollPRI = 0x2
	pollERR = 0x8
)

// reload reads the table again; one it cannot read closes the descriptor,
// and every path takes os from then on.
func (w *watched) reload() {
	b, err := os.ReadFile(w.path)
	var ok bool
	if err == nil {
		w.tab, ok = parseMountinfo(string(b))
	}
	if !ok {
		syscall.Close(w.fd)
		w.fd = -1
		w.tab = table{}
	}
}

// fileInfo is os's FileInfo of a stat the raw call filled.
type fileInfo struct {
	name string
	sys  syscall.Stat_t
}

func (f *fileInfo) Name() string       { return f.name }
func (f *fileInfo) Size() int64        { return f.sys.Size }
func (f *fileInfo) ModTime() time.Time { return time.Unix(f.sys.Mtim.Unix()) }
func (f *fileInfo) IsDir() bool        { return f.Mode().IsDir() }
func (f *fileInfo) Sys() any           { return &f.sys }

// Mode is the mode as os.Lstat reports it.
func (f *fileInfo) Mode() fs.FileMode {
	m := fs.FileMode(f.sys.Mode & 0o777)
	switch f.sys.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if f.sys.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if f.sys.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if f.sys.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
