//go:build linux && (amd64 || arm64)

package execwatch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Bounds on what is read from a process.
const (
	maxPath     = 4096    // PATH_MAX with its NUL: longer names fail ENAMETOOLONG
	maxArgs     = 8192    // argv entries kept
	maxArgBytes = 1 << 20 // argv bytes kept in all
)

var pageSize = uint64(os.Getpagesize())

// memory reads a process's memory through /proc/PID/mem, one page-bounded
// chunk at a time (a read that crosses into an unmapped page fails whole).
type memory struct {
	f     *os.File
	chunk []byte
	at    uint64 // address of chunk[0]
}

func openMemory(pid int) (*memory, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/mem")
	if err != nil {
		return nil, err
	}
	return &memory{f: f}, nil
}

func (m *memory) close() { m.f.Close() }

// page returns the bytes from addr to the end of its page, reusing the last
// chunk read: argv strings usually sit side by side.
func (m *memory) page(addr uint64) ([]byte, error) {
	if m.chunk != nil && addr >= m.at && addr < m.at+uint64(len(m.chunk)) {
		return m.chunk[addr-m.at:], nil
	}
	// Most names and arguments are short: read up to 512 bytes, not the
	// whole rest of the page.
	n := min(pageSize-addr%pageSize, 512)
	buf := make([]byte, n)
	got, err := m.f.ReadAt(buf, int64(addr))
	if got == 0 {
		if err == nil {
			err = errors.New("nothing mapped")
		}
		return nil, fmt.Errorf("read memory at %#x: %w", addr, err)
	}
	m.chunk, m.at = buf[:got], addr
	return m.chunk, nil
}

// cstring reads the NUL-terminated string at addr; complete is false when
// it is longer than limit bytes (the first limit are returned).
func (m *memory) cstring(addr uint64, limit int) (s string, complete bool, err error) {
	var out []byte
	for len(out) <= limit {
		b, err := m.page(addr)
		if err != nil {
			return "", false, err
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			out = append(out, b[:i]...)
			if len(out) > limit {
				return string(out[:limit]), false, nil
			}
			return string(out), true, nil
		}
		out = append(out, b...)
		addr += uint64(len(b))
	}
	return string(out[:limit]), false, nil
}

// pointer reads one pointer at addr.
func (m *memory) pointer(addr uint64) (uint64, error) {
	var raw [ptrSize]byte
	for i := 0; i < ptrSize; {
		b, err := m.page(addr + uint64(i))
		if err != nil {
			return 0, err
		}
		i += copy(raw[i:], b)
	}
	return binary.NativeEndian.Uint64(raw[:]), nil
}

// argv reads the NULL-terminated array of strings at addr, keeping at most
// maxArgs entries and maxArgBytes bytes; truncated says some were dropped.
func (m *memory) argv(addr uint64) (args []string, truncated bool, err error) {
	if addr == 0 {
		return nil, false, nil // Linux treats a NULL argv as empty
	}
	budget := maxArgBytes
	for i := 0; ; i++ {
		p, err := m.pointer(addr + uint64(i*ptrSize))
		if err != nil {
			return nil, false, fmt.Errorf("argv: %w", err)
		}
		if p == 0 {
			return args, truncated, nil
		}
		if i == maxArgs || budget == 0 {
			return args, true, nil
		}
		s, complete, err := m.cstring(p, budget)
		if err != nil {
			return nil, false, fmt.Errorf("argv[%d]: %w", i, err)
		}
		args = append(args, s)
		budget -= len(s)
		if !complete {
			return args, true, nil
		}
	}
}

// process resolves the names a process gives exec the way the kernel does
// for it: against its folder, its descriptors and its root (a chrooted
// process is read inside its root; /proc/self means the process, not the
// supervisor).
type process struct {
	pid    int
	dir    string // /proc/PID
	root   string // the process's root, as the supervisor sees it
	rootFD int
}

func openProcess(pid int) (*process, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	root, err := os.Readlink(dir + "/root")
	if err != nil {
		return nil, err
	}
	fd, err := unix.Open(dir+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the process's root: %w", err)
	}
	return &process{pid: pid, dir: dir, root: root, rootFD: fd}, nil
}

func (p *process) close() { unix.Close(p.rootFD) }

// inside turns a path the supervisor sees into the process's view of it.
func (p *process) inside(path string) string {
	if p.root == "/" {
		return path
	}
	if rest, ok := strings.CutPrefix(path, p.root); ok && (rest == "" || rest[0] == '/') {
		return "/" + strings.TrimPrefix(rest, "/")
	}
	return path
}

// terminal says the process's stdin is a terminal.
func (p *process) terminal() bool {
	link, err := os.Readlink(p.dir + "/fd/0")
	return err == nil && (strings.HasPrefix(link, "/dev/pts/") || strings.HasPrefix(link, "/dev/tty"))
}

// opened is the outcome of resolving one exec name: the file (open for
// reading) and its path in the process's view; or why it cannot be
// identified; or the errno the kernel would fail the exec with.
type opened struct {
	f     *os.File
	path  string
	why   string
	errno unix.Errno
}

// open resolves name as exec would, relative to dirfd (AT_FDCWD: the
// process's folder). emptyPath is execveat's AT_EMPTY_PATH.
func (p *process) open(dirfd int, name string, emptyPath bool) opened {
	if name == "" {
		switch {
		case !emptyPath:
			return opened{errno: unix.ENOENT}
		case dirfd == unix.AT_FDCWD:
			return opened{errno: unix.EACCES} // the folder itself
		}
		return p.openFD(dirfd)
	}
	abs := name
	if name[0] != '/' {
		base, o := p.base(dirfd)
		if o != nil {
			return *o
		}
		abs = base + "/" + name
	}
	clean := filepath.Clean(abs)
	if fd, ok := p.magic(clean); ok {
		if fd < 0 {
			return opened{why: fmt.Sprintf("%s is named through /proc", clean)}
		}
		return p.openFD(fd)
	}
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(p.rootFD, abs, &how)
	if err != nil {
		switch err {
		case unix.ENOENT, unix.ENOTDIR, unix.ENAMETOOLONG:
			// The exec fails the same way; answering it ourselves leaves no
			// window for the file to appear in between.
			return opened{errno: err.(unix.Errno)}
		case unix.ELOOP, unix.EXDEV:
			return opened{why: fmt.Sprintf("%s runs through a /proc link or a symlink loop", clean)}
		}
		return opened{why: fmt.Sprintf("cannot open %s: %v", clean, err)}
	}
	return reopen(fd, clean)
}

// base is the folder a relative name starts from, in the process's view.
func (p *process) base(dirfd int) (string, *opened) {
	link := p.dir + "/cwd"
	if dirfd != unix.AT_FDCWD {
		link = p.dir + "/fd/" + strconv.Itoa(dirfd)
	}
	dir, err := os.Readlink(link)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", &opened{errno: unix.EBADF}
	case err != nil:
		return "", &opened{why: fmt.Sprintf("cannot read the process's %s: %v", filepath.Base(link), err)}
	case strings.HasSuffix(dir, " (deleted)"):
		return "", &opened{why: fmt.Sprintf("its folder %s was deleted", dir)}
	case !strings.HasPrefix(dir, "/"):
		return "", &opened{errno: unix.ENOTDIR}
	}
	return p.inside(dir), nil
}

// magic recognizes the names that mean one of the process's own
// descriptors (/proc/self/fd/N, /dev/fd/N, /dev/stdin, /proc/self/exe as
// -1 for "another /proc name"). ok is false for an ordinary path.
func (p *process) magic(path string) (fd int, ok bool) {
	self := "/proc/" + strconv.Itoa(p.pid) + "/"
	var rest string
	switch {
	case path == "/dev/stdin":
		return 0, true
	case strings.HasPrefix(path, "/dev/fd/"):
		rest = "fd/" + strings.TrimPrefix(path, "/dev/fd/")
	case strings.HasPrefix(path, "/proc/self/"):
		rest = strings.TrimPrefix(path, "/proc/self/")
	case strings.HasPrefix(path, "/proc/thread-self/"):
		rest = strings.TrimPrefix(path, "/proc/thread-self/")
	case strings.HasPrefix(path, self):
		rest = strings.TrimPrefix(path, self)
	default:
		return 0, false
	}
	if n, found := strings.CutPrefix(rest, "fd/"); found {
		if fd, err := strconv.Atoi(n); err == nil && fd >= 0 {
			return fd, true
		}
	}
	return -1, true
}

// openFD opens the file behind the process's descriptor fd.
func (p *process) openFD(fd int) opened {
	link := p.dir + "/fd/" + strconv.Itoa(fd)
	target, err := os.Readlink(link)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return opened{errno: unix.EBADF}
	case err != nil:
		return opened{why: fmt.Sprintf("cannot read descriptor %d: %v", fd, err)}
	case strings.HasPrefix(target, "/memfd:"):
		return opened{why: fmt.Sprintf("descriptor %d is a memfd (%s), a program with no file", fd, target)}
	case strings.HasSuffix(target, " (deleted)"):
		return opened{why: fmt.Sprintf("descriptor %d is a deleted file (%s)", fd, target)}
	case !strings.HasPrefix(target, "/"):
		return opened{errno: unix.EACCES} // a pipe, socket or anonymous inode
	}
	n, err := unix.Open(link, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return opened{why: fmt.Sprintf("cannot open descriptor %d: %v", fd, err)}
	}
	return reopen(n, p.inside(target))
}

// reopen turns an O_PATH descriptor of a regular file into one open for
// reading; anything else fails the exec as the kernel would (EACCES). An
// O_PATH open first means a FIFO or a device is never opened for real.
func reopen(pathFD int, path string) opened {
	defer unix.Close(pathFD)
	var st unix.Stat_t
	if err := unix.Fstat(pathFD, &st); err != nil {
		return opened{why: fmt.Sprintf("cannot stat %s: %v", path, err)}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return opened{errno: unix.EACCES}
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pathFD), unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return opened{why: fmt.Sprintf("cannot read %s: %v", path, err)}
	}
	return opened{f: os.NewFile(uintptr(fd), path), path: path}
}

// callPath is the file a refused call of process pid names, for its
// report: absolute where the process's folder (or the *at call's folder
// descriptor) can be read, else as named; for fchmod the file its
// descriptor names; "" when unreadable.
func callPath(pid int, c modeCall, d *seccompData) string {
	dir := "/proc/" + strconv.Itoa(pid)
	if c.path < 0 {
		link, err := os.Readlink(dir + "/fd/" + strconv.Itoa(int(int32(d.Args[0]))))
		if err != nil {
			return ""
		}
		return link
	}
	m, err := openMemory(pid)
	if err != nil {
		return ""
	}
	defer m.close()
	name, _, err := m.cstring(d.Args[c.path], maxPath)
	if err != nil || name == "" {
		return ""
	}
	// libc changes the mode of a file it holds open through its
	// descriptor's name (fchmodat's fallback).
	for _, fds := range []string{"/proc/self/fd/", "/proc/thread-self/fd/", "/dev/fd/"} {
		if n, ok := strings.CutPrefix(name, fds); ok {
			if link, err := os.Readlink(dir + "/fd/" + n); err == nil {
				return link
			}
		}
	}
	if filepath.IsAbs(name) {
		return name
	}
	base := dir + "/cwd"
	if c.path > 0 {
		if fd := int32(d.Args[c.path-1]); fd != unix.AT_FDCWD {
			base = dir + "/fd/" + strconv.Itoa(int(fd))
		}
	}
	if b, err := os.Readlink(base); err == nil && !strings.HasSuffix(b, " (deleted)") {
		return filepath.Join(b, name)
	}
	return name
}
