//go:build linux && (amd64 || arm64)

package wsroot

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/yagent/yagent/internal/localstat"
)

// rawDir is a kept workspace root's folder, open for the raw system calls
// of a call's resolution and its read (internal/localstat says why they
// are raw). Each opens beneath the folder with openat2, whose flags let the
// kernel refuse what os.Root would have to handle: a symlink on the way
// (RESOLVE_NO_SYMLINKS, RESOLVE_NO_MAGICLINKS), a step out of the folder
// (RESOLVE_BENEATH), a mount crossed (RESOLVE_NO_XDEV: the mount may be a
// network one), a component the kernel's caches do not hold (RESOLVE_CACHED:
// looking it up would wait for the disk). Whatever the raw call refuses,
// the caller asks os.Root, whose answer it would have got before. The root
// folder itself is on a local file system (localstat.Local), or there is
// no rawDir.
type rawDir struct {
	f  *os.File // the folder, opened through its os.Root
	fd uintptr
}

// rawOff is set when the kernel refuses openat2 or its flags (before Linux
// 5.12, or a seccomp filter): this process asks os.Root from then on.
var rawOff atomic.Bool

// resolveCached is RESOLVE_CACHED (Linux 5.12), which x/sys does not name.
const resolveCached = 0x20

const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS |
	unix.RESOLVE_NO_XDEV | resolveCached

// newRawDir opens root's folder for raw calls when real, the folder with
// its symlinks resolved, lies on a local file system; nil otherwise.
func newRawDir(root *os.Root, real string) *rawDir {
	if rawOff.Load() || !localstat.Local(real) {
		return nil
	}
	f, err := root.Open(".")
	if err != nil {
		return nil
	}
	return &rawDir{f: f, fd: f.Fd()}
}

func (d *rawDir) close() {
	if d != nil {
		_ = d.f.Close()
	}
}

// open opens rel beneath the folder with flags; ok is false when the raw
// call does not answer (the caller asks os.Root).
func (d *rawDir) open(rel string, flags uint64) (fd int, ok bool) {
	if d == nil || rawOff.Load() {
		return -1, false
	}
	p, err := syscall.BytePtrFromString(rel)
	if err != nil {
		return -1, false
	}
	how := unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Resolve: resolveFlags}
	for {
		r, _, e := syscall.RawSyscall6(unix.SYS_OPENAT2, d.fd, uintptr(unsafe.Pointer(p)),
			uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
		switch e {
		case 0:
			return int(r), true
		case syscall.EINTR:
			continue
		case syscall.ENOSYS, syscall.EINVAL, syscall.E2BIG, syscall.EPERM:
			rawOff.Store(true)
		}
		return -1, false
	}
}

// lstat is os.Root's Lstat of rel by raw calls: an O_PATH descriptor of
// rel itself (a symlink last is not followed), read with fstat; the
// folder's own descriptor for ".".
func (d *rawDir) lstat(rel string) (fs.FileInfo, bool) {
	if rel == "." && d != nil && !rawOff.Load() {
		var st syscall.Stat_t
		if rawFstat(int(d.fd), &st) != 0 {
			return nil, false
		}
		return localstat.Info(".", &st), true
	}
	fd, ok := d.open(rel, unix.O_PATH|unix.O_NOFOLLOW)
	if !ok {
		return nil, false
	}
	defer rawClose(fd)
	var st syscall.Stat_t
	if rawFstat(fd, &st) != 0 {
		return nil, false
	}
	return localstat.Info(filepath.Base(rel), &st), true
}

// openRead opens rel for reading as os.Root's OpenFile with flags would
// (O_NOFOLLOW added: a symlink last goes to os.Root, which refuses it as
// well), by raw calls.
func (d *rawDir) openRead(rel, name string, flags int) (File, bool) {
	fd, ok := d.open(rel, uint64(flags)|unix.O_NOFOLLOW)
	if !ok {
		return nil, false
	}
	f := &rawFile{fd: fd, name: name}
	if rawFstat(fd, &f.st) != 0 {
		rawClose(fd)
		return nil, false
	}
	return f, true
}

// rawFile is a file open for reading whose reads are raw calls that do
// not wait for the disk (preadv2's RWF_NOWAIT). A read that would wait, or
// that the file system cannot make so, goes to the os package's File of
// the same descriptor, which reads through the scheduler's bookkeeping,
// and so does every call on the file after it.
type rawFile struct {
	fd   int
	name string
	st   syscall.Stat_t
	os   *os.File
}

func (f *rawFile) Read(p []byte) (int, error) {
	if f.os != nil {
		return f.os.Read(p)
	}
	if f.fd < 0 {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: fs.ErrClosed}
	}
	if len(p) == 0 {
		return 0, nil
	}
	iov := syscall.Iovec{Base: &p[0]}
	iov.SetLen(len(p))
	for {
		// Offset -1: from the file's own offset, as read(2).
		n, _, e := syscall.RawSyscall6(unix.SYS_PREADV2, uintptr(f.fd), uintptr(unsafe.Pointer(&iov)), 1,
			^uintptr(0), 0, unix.RWF_NOWAIT)
		switch e {
		case 0:
			if n == 0 {
				return 0, io.EOF
			}
			return int(n), nil
		case syscall.EINTR:
			continue
		}
		f.os = os.NewFile(uintptr(f.fd), f.name)
		return f.os.Read(p)
	}
}

func (f *rawFile) Seek(offset int64, whence int) (int64, error) {
	if f.os != nil {
		return f.os.Seek(offset, whence)
	}
	if f.fd < 0 {
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: fs.ErrClosed}
	}
	r, _, e := syscall.RawSyscall(syscall.SYS_LSEEK, uintptr(f.fd), uintptr(offset), uintptr(whence))
	if e != 0 {
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: e}
	}
	return int64(r), nil
}

func (f *rawFile) Stat() (fs.FileInfo, error) {
	return localstat.Info(filepath.Base(f.name), &f.st), nil
}

func (f *rawFile) Close() error {
	if f.os != nil {
		return f.os.Close()
	}
	if f.fd < 0 {
		return &fs.PathError{Op: "close", Path: f.name, Err: fs.ErrClosed}
	}
	rawClose(f.fd)
	f.fd = -1
	return nil
}

func rawFstat(fd int, st *syscall.Stat_t) syscall.Errno {
	_, _, e := syscall.RawSyscall(syscall.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(st)), 0)
	return e
}

// rawClose closes a descriptor opened for reading or as O_PATH, which no
// file system flushes.
func rawClose(fd int) {
	_, _, _ = syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
}
