package quietio

import (
	"io"
	"net"
	"os"
	"syscall"
)

// rw reads and writes the descriptor of rc with raw system calls. The
// descriptor must be non-blocking: a raw call that blocked would hold its
// processor, and the runtime could not hand it to another thread.
type rw struct {
	rc   syscall.RawConn
	net  bool
	name string // the file's, for its errors
}

// readRaw reads fd into p with raw reads; done is false when there is
// nothing to read yet.
func readRaw(fd uintptr, p []byte) (n int, errno syscall.Errno, done bool) {
	for {
		r, e := sysRead(fd, p)
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return 0, 0, false
		}
		return r, e, true
	}
}

func (q *rw) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := q.rc.Read(func(fd uintptr) (done bool) {
		n, errno, done = readRaw(fd, p)
		return done // not done: the poller waits, then calls again
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, q.wrap("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (q *rw) Write(p []byte) (int, error) {
	var done int
	var errno syscall.Errno
	err := q.rc.Write(func(fd uintptr) bool {
		for done < len(p) {
			r, e := sysWrite(fd, p[done:])
			switch e {
			case 0:
				done += r
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	if err == nil && errno != 0 {
		err = q.wrap("write", errno)
	}
	return done, err
}

// wrap names a failed call as the net or os package would.
func (q *rw) wrap(op string, errno syscall.Errno) error {
	if q.net {
		return &net.OpError{Op: op, Net: "unix", Err: os.NewSyscallError(op, errno)}
	}
	return &os.PathError{Op: op, Path: q.name, Err: errno}
}

type quietConn struct {
	net.Conn
	rw
}

func (c *quietConn) Read(p []byte) (int, error)  { return c.rw.Read(p) }
func (c *quietConn) Write(p []byte) (int, error) { return c.rw.Write(p) }

// Conn returns c reading and writing with raw system calls when c is a
// Unix socket (the net package polls every one, as net.FileConn makes the
// call channel's); anything else it returns as it is. It takes the socket
// over: out of the runtime's poller, c closed, a duplicate kept, so that
// closing what Conn returns closes the socket and closing c does nothing
// more. Deadlines work as on c.
func Conn(c net.Conn) net.Conn {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return c
	}
	if s, err := newSock(uc); err == nil {
		return s
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return c
	}
	return &quietConn{Conn: c, rw: rw{rc: rc, net: true}}
}

type quietFile struct {
	*os.File
	rw
}

func (f *quietFile) Read(p []byte) (int, error)  { return f.rw.Read(p) }
func (f *quietFile) Write(p []byte) (int, error) { return f.rw.Write(p) }

// File returns f reading and writing with raw system calls. f's descriptor
// must be non-blocking and registered with the poller: a file that
// os.NewFile made from a non-blocking pipe or socket descriptor. The
// result closes f.
func File(f *os.File) io.ReadWriteCloser {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	return &quietFile{File: f, rw: rw{rc: rc, name: f.Name()}}
}

// Quiet reports whether x reads and writes with raw system calls: a value
// Conn or File wrapped.
func Quiet(x any) bool {
	switch x.(type) {
	case *sock, *quietConn, *quietFile:
		return true
	}
	return false
}
