package netproxy

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// maxPending bounds what a SOCKS5 client may send while its request waits
// on the Decider; past it the proxy stops reading until the answer.
const maxPending = 64 << 10

// aLongTimeAgo is a read deadline already past, which makes a pending
// Read return at once.
var aLongTimeAgo = time.Unix(1, 0)

// clientConn is a connection from a client. Reads return pending first:
// the byte read to tell SOCKS5 from HTTP, or what a SOCKS5 client sent
// while its request waited on the Decider. Closing it removes it from the
// connections Close closes.
type clientConn struct {
	net.Conn
	p *Proxy
	// pending and readErr are touched by one goroutine at a time: the
	// handshake's, the watcher's between watch and stop, or srv's, whose
	// reads of a connection are serialised.
	pending []byte
	readErr error

	closeOnce sync.Once
	closeErr  error
}

func (c *clientConn) Read(b []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(b, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	if c.readErr != nil {
		return 0, c.readErr
	}
	return c.Conn.Read(b)
}

// CloseWrite half-closes the connection where the socket supports it, as
// srv does before it hangs up on a request too large.
func (c *clientConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *clientConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = c.Conn.Close()
		c.p.untrack(c)
	})
	return c.closeErr
}

// watch reads the client while a Decider is asked, so a client that hangs
// up cancels the question (cancel is called). What it reads is kept in
// pending. stop ends the watch and returns once the reader is done.
func (c *clientConn) watch(cancel context.CancelFunc) (stop func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4<<10)
		for len(c.pending) < maxPending {
			n, err := c.Conn.Read(buf[:min(len(buf), maxPending-len(c.pending))])
			c.pending = append(c.pending, buf[:n]...)
			if err != nil {
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					c.readErr = err
					cancel()
				}
				return
			}
		}
	}()
	return func() {
		_ = c.Conn.SetReadDeadline(aLongTimeAgo)
		<-done
		_ = c.Conn.SetReadDeadline(time.Time{})
	}
}

// splice copies between client and up both ways until both directions
// end, and returns the bytes each way. first is what the client sent that
// was read before the splice began. A direction that ends cleanly is
// half-closed where the connection supports it, so the other can finish;
// one that fails, or cannot be half-closed, closes both.
func splice(client net.Conn, first []byte, up net.Conn) (upN, downN int64) {
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			_ = client.Close()
			_ = up.Close()
		})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var err error
		downN, err = io.Copy(client, up)
		endWrite(client, err, closeBoth)
	}()
	var err error
	if len(first) > 0 {
		var n int
		n, err = up.Write(first)
		upN = int64(n)
	}
	if err == nil {
		var n int64
		n, err = io.Copy(up, client)
		upN += n
	}
	endWrite(up, err, closeBoth)
	<-done
	closeBoth()
	return upN, downN
}

// endWrite ends a direction of a splice into dst.
func endWrite(dst net.Conn, err error, closeBoth func()) {
	if cw, ok := dst.(interface{ CloseWrite() error }); ok && err == nil {
		if cw.CloseWrite() == nil {
			return
		}
	}
	closeBoth()
}
