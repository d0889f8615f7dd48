package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RefusedHeader names the host a 403 of the proxy refused, so a client can
// tell the proxy's refusal from an upstream's 403.
const RefusedHeader = "X-Yagent-Refused"

// maxUpstreamHeaderBytes bounds the response headers of a forwarded
// request.
const maxUpstreamHeaderBytes = 1 << 20

// Messages of a request the proxy cannot take, which tell the client what
// to send instead.
const (
	msgOriginForm = "this is a proxy: send the request with an absolute URL (GET http://host/path HTTP/1.1), or open a tunnel with CONNECT host:port"
	msgHTTPS      = "https:// URLs go through a tunnel: send CONNECT host:443 (use this proxy as the HTTPS proxy) and speak TLS inside it"
	msgScheme     = "the proxy forwards http:// URLs only; for another protocol open a tunnel with CONNECT host:port"
	msgUpgrade    = "the proxy does not forward protocol upgrades over plain HTTP; open a tunnel with CONNECT host:port"
)

// hopHeaders are the hop-by-hop headers (RFC 9110 §7.6.1) and the proxy's
// own, none of which goes on to the next hop.
var hopHeaders = []string{
	"Connection",
	"Keep-Alive",
	"Proxy-Authenticate",
	"Proxy-Authorization",
	"Proxy-Connection",
	"Te",
	"Trailer",
	"Transfer-Encoding",
	"Upgrade",
}

// removeHopByHop deletes the hop-by-hop headers from h, those the
// Connection header names included.
func removeHopByHop(h http.Header) {
	for _, v := range h.Values("Connection") {
		for f := range strings.SplitSeq(v, ",") {
			if f = textproto.TrimString(f); f != "" {
				h.Del(f)
			}
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}

// serveHTTP is srv's handler: a CONNECT opens a tunnel, any other request
// is forwarded.
func (p *Proxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.serveConnect(w, r)
		return
	}
	p.forward(w, r)
}

// serveConnect decides and dials a CONNECT's target, then splices the
// client to it.
func (p *Proxy) serveConnect(w http.ResponseWriter, r *http.Request) {
	// The connection leaves srv's count when it is hijacked, and this
	// handler goes on splicing it.
	p.wg.Add(1)
	defer p.wg.Done()

	host, port, err := splitAuthority(r.RequestURI, 0)
	if err != nil {
		p.log.Debug("bad CONNECT", "remote", r.RemoteAddr, "uri", r.RequestURI, "error", err)
		textResponse(w, http.StatusBadRequest, "CONNECT takes host:port: "+err.Error())
		return
	}
	ev := Event{Target: Target{Host: host, Port: port, Proto: ProtoConnect}, Start: time.Now()}
	defer p.finish(&ev)

	addrs, f := p.decide(r.Context(), &ev)
	var up net.Conn
	if f == nil {
		ev.Allowed = true
		up, ev.Addr, f = p.dial(r.Context(), ev.Target, addrs)
	}
	if f != nil {
		ev.Reason = f.reason
		p.failHTTP(w, ev.Target, f)
		return
	}
	defer p.closeUpstream(up)

	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// srv speaks HTTP/1 alone, whose connections hijack.
		ev.Reason = "hijack: " + err.Error()
		textResponse(w, http.StatusInternalServerError, "the proxy could not open the tunnel")
		return
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		ev.Reason = "the client went away: " + err.Error()
		return
	}
	// What the client sent past its request is in brw (the byte srv read
	// in the background included); what follows is on the socket, read
	// directly so the copy can use splice(2). The conn's pending byte was
	// srv's first read.
	first, _ := brw.Reader.Peek(brw.Reader.Buffered())
	first = append([]byte(nil), first...)
	raw := conn
	if c, ok := conn.(*clientConn); ok {
		raw = c.Conn
	}
	ev.Up, ev.Down = splice(raw, first, up)
}

// forward decides and sends on a plain HTTP request, and copies the
// response back.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Scheme == "" || r.URL.Host == "":
		textResponse(w, http.StatusBadRequest, msgOriginForm)
		return
	case r.URL.Scheme == "https":
		textResponse(w, http.StatusBadRequest, msgHTTPS)
		return
	case r.URL.Scheme != "http":
		textResponse(w, http.StatusBadRequest, msgScheme)
		return
	}
	host, port, err := splitAuthority(r.URL.Host, 80)
	if err != nil {
		textResponse(w, http.StatusBadRequest, "bad host in the URL: "+err.Error())
		return
	}
	ev := Event{
		Target: Target{Host: host, Port: port, Proto: ProtoHTTP, Method: r.Method, URL: r.URL.Redacted()},
		Start:  time.Now(),
	}
	broken := p.forwardTo(w, r, &ev)
	p.finish(&ev)
	if broken {
		// Abort the client's connection, so a response cut short does
		// not pass for a whole one.
		panic(http.ErrAbortHandler)
	}
}

// forwardTo sends r to ev's target if the Decider allows it and copies the
// response back, filling ev in; true when the response broke off after
// its header was sent.
func (p *Proxy) forwardTo(w http.ResponseWriter, r *http.Request, ev *Event) (broken bool) {
	ctx := r.Context()
	addrs, f := p.decide(ctx, ev)
	if f != nil {
		ev.Reason = f.reason
		p.failHTTP(w, ev.Target, f)
		return false
	}
	ev.Allowed = true

	// The transport dials the decided addresses alone, whatever the
	// request's URL says, and keeps no connection for another request:
	// each is decided on its own.
	var dl upstreamDials
	defer dl.close(p)
	target := ev.Target
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			c, addr, f := p.dial(ctx, target, addrs)
			dl.add(c, addr, f)
			if f != nil {
				return nil, f
			}
			return c, nil
		},
		DisableKeepAlives:      true,
		DisableCompression:     true,
		MaxResponseHeaderBytes: maxUpstreamHeaderBytes,
	}
	defer tr.CloseIdleConnections()

	out := r.Clone(ctx)
	out.RequestURI = ""
	// The request goes to the host the Decider judged, and says so in
	// its Host header: a Host naming another site would reach that site
	// through an address allowed for this one (RFC 9112 §3.2.2 has a
	// proxy replace it too).
	out.Host = ""
	out.URL.Host = urlHost(ev.Target, r.URL.Port() != "")
	out.Close = false
	out.Trailer = nil
	removeHopByHop(out.Header)
	var body *countingBody
	if r.Body != nil && r.Body != http.NoBody {
		body = &countingBody{ReadCloser: r.Body}
		out.Body = body
		defer func() { ev.Up = body.n.Load() }()
	}

	resp, err := tr.RoundTrip(out)
	if err != nil {
		switch f := dl.failed(); {
		case f != nil:
			ev.Reason = f.reason
			p.failHTTP(w, ev.Target, f)
		case ctx.Err() != nil:
			ev.Reason = "the client went away or the proxy closed"
		default:
			ev.Addr = dl.addr()
			ev.Reason = fmt.Sprintf("%s at %s did not answer: %v", ev.Target.Host, ev.Addr, err)
			textResponse(w, http.StatusBadGateway, ev.Reason)
		}
		return false
	}
	defer resp.Body.Close()
	ev.Addr = dl.addr()
	if resp.StatusCode == http.StatusSwitchingProtocols {
		ev.Reason = "the upstream switched protocols"
		textResponse(w, http.StatusBadGateway, msgUpgrade)
		return false
	}

	h := w.Header()
	for k, vv := range resp.Header {
		h[k] = vv
	}
	// A response's Connection header that says close is gone already
	// (net/http drops it), and with it the names of any other hop-by-hop
	// headers it listed; the fixed list still applies.
	removeHopByHop(h)
	// srv would add these; the client gets the upstream's response as
	// it was.
	for _, k := range []string{"Content-Type", "Date"} {
		if _, ok := resp.Header[k]; !ok {
			h[k] = nil
		}
	}
	w.WriteHeader(resp.StatusCode)
	ev.Down, err = copyResponse(w, resp.Body, resp.ContentLength < 0)
	if err != nil {
		ev.Reason = "the response broke off: " + err.Error()
		return true
	}
	return false
}

// urlHost is the authority of a forwarded request's URL: t's host, with
// the port if the client wrote one.
func urlHost(t Target, withPort bool) string {
	if withPort {
		return t.HostPort()
	}
	if strings.Contains(t.Host, ":") {
		return "[" + t.Host + "]"
	}
	return t.Host
}

// failHTTP answers a target not reached: 403 for a refusal, 502 for a
// name that did not resolve or an address that did not answer.
func (p *Proxy) failHTTP(w http.ResponseWriter, t Target, f *failure) {
	if f.kind == failRefused {
		w.Header().Set(RefusedHeader, t.Host)
		textResponse(w, http.StatusForbidden, f.msg)
		return
	}
	textResponse(w, http.StatusBadGateway, f.msg)
}

// textResponse answers with msg as a line of plain text.
func textResponse(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg+"\n")
}

// copyResponse copies a response body to the client, flushing after each
// read when the length is unknown (a stream of events, say), and returns
// the bytes written.
func copyResponse(w http.ResponseWriter, body io.Reader, flush bool) (int64, error) {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	var n int64
	for {
		m, rerr := body.Read(buf)
		if m > 0 {
			k, werr := w.Write(buf[:m])
			n += int64(k)
			if werr != nil {
				return n, werr
			}
			if flush {
				if err := rc.Flush(); err != nil {
					return n, err
				}
			}
		}
		if errors.Is(rerr, io.EOF) {
			return n, nil
		}
		if rerr != nil {
			return n, rerr
		}
	}
}

// countingBody counts the bytes of a request body the transport reads,
// from its own goroutine.
type countingBody struct {
	io.ReadCloser
	n atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// upstreamDials are the connections a forwarded request's transport
// dialed, which the proxy tracks until the request ends.
type upstreamDials struct {
	mu    sync.Mutex
	conns []net.Conn
	last  netip.AddrPort
	fail  *failure
}

func (d *upstreamDials) add(c net.Conn, addr netip.AddrPort, f *failure) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c != nil {
		d.conns = append(d.conns, c)
		d.last = addr
	}
	d.fail = f
}

func (d *upstreamDials) addr() netip.AddrPort {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
}

func (d *upstreamDials) failed() *failure {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fail
}

func (d *upstreamDials) close(p *Proxy) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		p.closeUpstream(c)
	}
}
