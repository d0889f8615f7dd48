package mcpserver

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
)

// net/http writes a response through a 4 KiB buffer of its connection: an
// answer that does not fit beside its header goes out in two or three
// writes, two or three TCP segments the client reads one after the other
// (a 4 KiB file read answers in about 4.6 KB). On the connections of
// HTTPFront.Listener the call lane holds what net/http writes of one answer
// and sends it in one write (laneStream.finish).

// heldMax bounds the answer the lane holds: a larger one is copied for
// little, since net/http writes most of it in one write already.
const heldMax = 64 << 10

// Listener wraps ln for the HTTP server of f, whose ConnContext is to be
// f.ConnContext: on its connections the call lane sends each answer of up
// to heldMax bytes, with its header, in one write. A server on a plain
// listener answers the same, in net/http's writes.
func (f *HTTPFront) Listener(ln net.Listener) net.Listener { return heldListener{ln} }

// ConnContext is for http.Server.ConnContext: it tells the call lane the
// connection of Listener a request came on (under TLS, the one beneath).
func (f *HTTPFront) ConnContext(ctx context.Context, c net.Conn) context.Context {
	if t, ok := c.(*tls.Conn); ok {
		c = t.NetConn()
	}
	if hc, ok := c.(*heldConn); ok {
		return context.WithValue(ctx, heldConnKey{}, hc)
	}
	return ctx
}

type heldConnKey struct{}

// heldConnOf is the connection of Listener that an HTTP/1 request came
// on, or nil. An HTTP/2 connection carries other streams' frames, written
// by net/http's own writer: it is not held.
func heldConnOf(ctx context.Context, protoMajor int) *heldConn {
	if protoMajor != 1 {
		return nil
	}
	hc, _ := ctx.Value(heldConnKey{}).(*heldConn)
	return hc
}

type heldListener struct{ net.Listener }

func (l heldListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &heldConn{Conn: c}, nil
}

// heldConn is a connection whose writes can be held and sent together.
type heldConn struct {
	net.Conn

	mu   sync.Mutex
	held bool
	buf  []byte
	err  error // of the write that sent what was held, told to the next Write
}

func (c *heldConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if c.held {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// hold keeps what is written until send.
func (c *heldConn) hold() {
	c.mu.Lock()
	c.held = true
	c.mu.Unlock()
}

// send writes what was held in one write and stops holding.
func (c *heldConn) send() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = false
	if len(c.buf) > 0 && c.err == nil {
		_, c.err = c.Conn.Write(c.buf)
	}
	c.buf = c.buf[:0]
	if cap(c.buf) > heldMax+4<<10 {
		c.buf = nil
	}
}

// CloseWrite keeps the TCP connection's half-close, which net/http uses
// to end a connection cleanly after some errors.
func (c *heldConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
