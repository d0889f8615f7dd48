package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/yagent/yagent/internal/quietio"
	pluginpb "github.com/yagent/yagent/sdk/proto"
)

// FrameConn reads and writes Frames on one end of a call channel: a 4-byte
// big-endian length, then the marshalled Frame. Writes are whole frames,
// from any goroutine; reads are from one goroutine.
type FrameConn struct {
	conn net.Conn
	r    *bufio.Reader
	hdr  [4]byte

	wmu sync.Mutex
}

// NewFrameConn reads and writes frames on c, with raw system calls where c
// is a socket (internal/quietio). It takes c over: its Close is the one
// that closes c's socket.
func NewFrameConn(c net.Conn) *FrameConn {
	c = quietio.Conn(c)
	return &FrameConn{conn: c, r: bufio.NewReaderSize(c, 64<<10)}
}

// frameBufs keeps write buffers of ordinary size; a buffer grown past
// keptFrameBytes (a screenshot) is left to the collector.
var frameBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

const keptFrameBytes = 256 << 10

// ErrFrameTooBig is the error of a frame over MaxMessageBytes, written or
// read.
var ErrFrameTooBig = fmt.Errorf("frame over %d bytes", MaxMessageBytes)

// Write sends f as one frame: marshalled outside the lock, written in one
// call under it.
func (c *FrameConn) Write(f *pluginpb.Frame) error {
	bp := frameBufs.Get().(*[]byte)
	b, err := proto.MarshalOptions{}.MarshalAppend(append((*bp)[:0], 0, 0, 0, 0), f)
	defer func() {
		if cap(b) <= keptFrameBytes {
			*bp = b[:0]
			frameBufs.Put(bp)
		}
	}()
	if err != nil {
		return fmt.Errorf("marshal frame: %w", err)
	}
	if len(b)-4 > MaxMessageBytes {
		return ErrFrameTooBig
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.conn.Write(b); err != nil {
		return fmt.Errorf("write frame: %w", err)
	}
	return nil
}

// Read returns the next frame; io.EOF when the other end closed between
// frames.
func (c *FrameConn) Read() (*pluginpb.Frame, error) {
	if _, err := io.ReadFull(c.r, c.hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(c.hdr[:])
	if n > MaxMessageBytes {
		return nil, ErrFrameTooBig
	}
	// A frame that fits the reader's buffer is decoded where it lies:
	// proto.Unmarshal copies what it keeps, never aliasing its input.
	var buf []byte
	if int(n) <= c.r.Size() {
		b, err := c.r.Peek(int(n))
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		buf = b
		defer c.r.Discard(int(n))
	} else {
		buf = make([]byte, n)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	f := &pluginpb.Frame{}
	if err := proto.Unmarshal(buf, f); err != nil {
		return nil, fmt.Errorf("unmarshal frame: %w", err)
	}
	return f, nil
}

// Close closes the connection.
func (c *FrameConn) Close() error { return c.conn.Close() }

// Spinner is c's socket when its reads can spin (quietio.Spinner).
func (c *FrameConn) Spinner() (quietio.Spinner, bool) {
	s, ok := c.conn.(quietio.Spinner)
	return s, ok
}
