//go:build unix

package grep

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// load returns the contents of the file at path: read into the scanner's
// buffer, or mapped when large. It uses raw system calls: os.Open would
// also try to register every file with the network poller, one wasted
// call per file on a walk of thousands. release must be called when the
// data is no longer used.
func (sc *scanner) load(path string) (data []byte, release func(), err error) {
	fd, err := retryEINTR(func() (int, error) { return unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY, 0) })
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	size := int(st.Size)
	if size >= mmapMin {
		if b, err := unix.Mmap(fd, 0, size, unix.PROT_READ, unix.MAP_SHARED); err == nil {
			return b, func() { _ = unix.Munmap(b) }, nil
		}
	}
	buf := sc.grow(size + 1)
	n := 0
	for {
		if n == len(buf) {
			buf = append(buf, 0)[:n]
			buf = buf[:cap(buf)]
		}
		m, err := retryEINTR(func() (int, error) { return unix.Read(fd, buf[n:]) })
		if err != nil {
			return nil, nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			break
		}
		n += m
		if n == size {
			// The size fstat gave is read: skip the call that would only
			// say end of file (a file growing meanwhile is read as it was).
			break
		}
	}
	sc.keep(buf)
	return buf[:n], func() {}, nil
}

func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}
