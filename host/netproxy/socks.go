package netproxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"time"
)

// SOCKS5 (RFC 1928) values the proxy reads and writes.
const (
	socksVersion = 0x05

	socksMethodNoAuth       = 0x00
	socksMethodNoAcceptable = 0xFF

	socksCmdConnect = 0x01

	socksAtypIPv4   = 0x01
	socksAtypDomain = 0x03
	socksAtypIPv6   = 0x04

	socksSucceeded       = 0x00
	socksGeneralFailure  = 0x01
	socksNotAllowed      = 0x02
	socksNetUnreachable  = 0x03
	socksHostUnreachable = 0x04
	socksConnRefused     = 0x05
	socksCmdUnsupported  = 0x07
	socksAtypUnsupported = 0x08
)

// serveSOCKS runs a SOCKS5 handshake whose version byte serveConn read,
// then splices the client to its target. Only CONNECT without
// authentication is served; a domain name is resolved by the proxy
// (socks5h), since the Decider must see the name before any lookup.
func (p *Proxy) serveSOCKS(c *clientConn) {
	defer c.Close()
	raw := c.Conn
	var buf [255]byte

	// Method negotiation: NMETHODS, METHODS.
	if _, err := io.ReadFull(raw, buf[:1]); err != nil {
		return
	}
	methods := buf[:buf[0]]
	if _, err := io.ReadFull(raw, methods); err != nil {
		return
	}
	noAuth := false
	for _, m := range methods {
		noAuth = noAuth || m == socksMethodNoAuth
	}
	if !noAuth {
		_, _ = raw.Write([]byte{socksVersion, socksMethodNoAcceptable})
		return
	}
	if _, err := raw.Write([]byte{socksVersion, socksMethodNoAuth}); err != nil {
		return
	}

	// Request: VER CMD RSV ATYP DST.ADDR DST.PORT.
	var hdr [4]byte
	if _, err := io.ReadFull(raw, hdr[:]); err != nil || hdr[0] != socksVersion {
		return
	}
	var host string
	switch hdr[3] {
	case socksAtypIPv4:
		if _, err := io.ReadFull(raw, buf[:4]); err != nil {
			return
		}
		host = netip.AddrFrom4([4]byte(buf[:4])).String()
	case socksAtypIPv6:
		if _, err := io.ReadFull(raw, buf[:16]); err != nil {
			return
		}
		host = netip.AddrFrom16([16]byte(buf[:16])).Unmap().String()
	case socksAtypDomain:
		if _, err := io.ReadFull(raw, buf[:1]); err != nil {
			return
		}
		name := buf[:buf[0]]
		if _, err := io.ReadFull(raw, name); err != nil {
			return
		}
		host = string(name)
	default:
		socksReply(raw, socksAtypUnsupported, netip.AddrPort{})
		return
	}
	var portBytes [2]byte
	if _, err := io.ReadFull(raw, portBytes[:]); err != nil {
		return
	}
	port := int(portBytes[0])<<8 | int(portBytes[1])
	if hdr[1] != socksCmdConnect {
		socksReply(raw, socksCmdUnsupported, netip.AddrPort{})
		return
	}
	canon, err := canonHost(host)
	if err == nil && port == 0 {
		err = errPortZero
	}
	if err != nil {
		p.log.Debug("bad SOCKS5 target", "remote", raw.RemoteAddr(), "host", host, "port", port, "error", err)
		socksReply(raw, socksGeneralFailure, netip.AddrPort{})
		return
	}
	_ = raw.SetReadDeadline(time.Time{})

	ev := Event{Target: Target{Host: canon, Port: port, Proto: ProtoSOCKS5}, Start: time.Now()}
	defer p.finish(&ev)
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	stop := c.watch(cancel)
	addrs, f := p.decide(ctx, &ev)
	var up net.Conn
	if f == nil {
		ev.Allowed = true
		up, ev.Addr, f = p.dial(ctx, ev.Target, addrs)
	}
	stop()
	if f != nil {
		ev.Reason = f.reason
		p.log.Debug("SOCKS5 target not reached", "target", ev.Target.HostPort(), "reason", f.msg)
		socksReply(raw, f.socksReply(), netip.AddrPort{})
		return
	}
	defer p.closeUpstream(up)
	var bound netip.AddrPort
	if a, ok := up.LocalAddr().(*net.TCPAddr); ok {
		ap := a.AddrPort()
		bound = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	if !socksReply(raw, socksSucceeded, bound) {
		ev.Reason = "the client went away"
		return
	}
	first := c.pending
	c.pending = nil
	ev.Up, ev.Down = splice(raw, first, up)
}

// errPortZero refuses a SOCKS5 request for port 0, which cannot be dialed.
var errPortZero = errors.New("port 0 cannot be connected to")

// socksReply writes a reply with code and the bound address (0.0.0.0:0 if
// zero), and reports whether it was written.
func socksReply(w io.Writer, code byte, bound netip.AddrPort) bool {
	msg := []byte{socksVersion, code, 0x00}
	a := bound.Addr()
	switch {
	case a.Is4():
		b := a.As4()
		msg = append(msg, socksAtypIPv4)
		msg = append(msg, b[:]...)
	case a.Is6():
		b := a.As16()
		msg = append(msg, socksAtypIPv6)
		msg = append(msg, b[:]...)
	default:
		msg = append(msg, socksAtypIPv4, 0, 0, 0, 0)
	}
	msg = append(msg, byte(bound.Port()>>8), byte(bound.Port()))
	_, err := w.Write(msg)
	return err == nil
}
