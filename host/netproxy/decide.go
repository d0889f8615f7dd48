package netproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
)

// failKind is why a target was not reached; each protocol answers it in
// its own words.
type failKind int

const (
	failRefused     failKind = iota + 1 // the Decider refused
	failUnresolved                      // the name did not resolve
	failUnreachable                     // no decided address could be dialed
)

// failure is a target not reached.
type failure struct {
	kind failKind
	// msg is what the client is shown.
	msg string
	// reason is Event.Reason: msg, or more where the client is not told.
	reason string
	// err is the lookup's or last dial's error, for the SOCKS5 reply code.
	err error
}

func (f *failure) Error() string { return f.reason }

// decide asks the Decider about ev's target, resolving its name once in
// between, and returns the addresses it may be dialed at; ev gets what the
// Decider noted.
func (p *Proxy) decide(ctx context.Context, ev *Event) ([]netip.Addr, *failure) {
	note := &verdictNote{}
	ctx = context.WithValue(ctx, verdictKey{}, note)
	defer func() {
		note.mu.Lock()
		ev.Verdict = note.v
		note.mu.Unlock()
	}()
	t := ev.Target
	if err := p.decider.Name(ctx, t); err != nil {
		return nil, p.refused(ctx, t, err)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(t.Host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		found, err := p.resolver.LookupNetIP(ctx, "ip", t.Host)
		if err != nil {
			msg := fmt.Sprintf("%s did not resolve: %v", t.Host, err)
			return nil, &failure{kind: failUnresolved, msg: msg, reason: msg, err: err}
		}
		addrs = uniqueUnmapped(found)
		if len(addrs) == 0 {
			msg := fmt.Sprintf("%s did not resolve: no address", t.Host)
			return nil, &failure{kind: failUnresolved, msg: msg, reason: msg}
		}
	}
	allowed, err := p.decider.Addrs(ctx, t, addrs)
	if err != nil {
		return nil, p.refused(ctx, t, err)
	}
	if len(allowed) == 0 {
		msg := fmt.Sprintf("no address of %s may be connected to", t.Host)
		return nil, &failure{kind: failRefused, msg: msg, reason: msg}
	}
	return allowed, nil
}

// refused turns a Decider's error into the refusal the client sees: a
// Refusal's own message, or a generic one naming the host, the error then
// going to the log and the Event only.
func (p *Proxy) refused(ctx context.Context, t Target, err error) *failure {
	var r *Refusal
	if errors.As(err, &r) && r.Message != "" {
		return &failure{kind: failRefused, msg: r.Message, reason: r.Message}
	}
	msg := fmt.Sprintf("the connection to %s was refused", t.Host)
	if ctx.Err() == nil {
		p.log.Warn("decider failed; refusing", "target", t.HostPort(), "error", err)
	}
	return &failure{kind: failRefused, msg: msg, reason: msg + ": " + err.Error()}
}

// dial connects to the first of addrs that answers, in order, at t's
// port, and tracks the connection for Close.
func (p *Proxy) dial(ctx context.Context, t Target, addrs []netip.Addr) (net.Conn, netip.AddrPort, *failure) {
	var last error
	tried := make([]string, 0, len(addrs))
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, uint16(t.Port))
		c, err := p.dialer(ctx, "tcp", ap)
		if err == nil {
			if !p.track(c) {
				_ = c.Close()
				return nil, netip.AddrPort{}, &failure{kind: failUnreachable, msg: "the proxy is closing", reason: "the proxy closed", err: net.ErrClosed}
			}
			return c, ap, nil
		}
		last = err
		tried = append(tried, ap.String())
		if ctx.Err() != nil {
			break
		}
	}
	msg := fmt.Sprintf("could not connect to %s at %s: %v", t.Host, strings.Join(tried, ", "), last)
	return nil, netip.AddrPort{}, &failure{kind: failUnreachable, msg: msg, reason: msg, err: last}
}

// uniqueUnmapped returns addrs with IPv4-mapped IPv6 addresses as IPv4
// (some resolvers return IPv4 answers so), each once, in order.
func uniqueUnmapped(addrs []netip.Addr) []netip.Addr {
	out := make([]netip.Addr, 0, len(addrs))
	seen := make(map[netip.Addr]bool, len(addrs))
	for _, a := range addrs {
		a = a.Unmap()
		if a.IsValid() && !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// canonHost returns a host as the Decider sees it: an IP address in its
// usual form (IPv4-mapped IPv6 as IPv4), or a name in lower-case ASCII
// without its trailing dot, so one host has one spelling a policy can
// match. It refuses what is neither: a zoned address, a name with other
// characters, or one that ends in a number (0x7f.1, 2130706433), which some
// resolvers would read as an IPv4 address the Decider never saw as one.
func canonHost(h string) (string, error) {
	if len(h) >= 2 && h[0] == '[' && h[len(h)-1] == ']' {
		h = h[1 : len(h)-1]
	}
	if h == "" {
		return "", errors.New("the host is empty")
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", fmt.Errorf("%q: an address with a zone is not accepted", h)
		}
		return a.Unmap().String(), nil
	}
	name := strings.TrimSuffix(h, ".")
	if name == "" || len(name) > 253 {
		return "", fmt.Errorf("%q is not a host name", h)
	}
	b := []byte(name)
	for i, c := range b {
		switch {
		case 'A' <= c && c <= 'Z':
			b[i] = c + ('a' - 'A')
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		case c >= 0x80:
			return "", fmt.Errorf("%q: write an international name in its xn-- form", h)
		default:
			return "", fmt.Errorf("%q is not a host name", h)
		}
	}
	name = string(b)
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "", fmt.Errorf("%q is not a host name", h)
		}
	}
	if isNumber(labels[len(labels)-1]) {
		return "", fmt.Errorf("%q is neither a name nor an IP address in its usual form", h)
	}
	return name, nil
}

// isNumber reports whether a label reads as a number the way IPv4 parsers
// read parts (decimal, octal, or hexadecimal after 0x), as the URL
// standard's "ends in a number" check does.
func isNumber(l string) bool {
	if rest, ok := strings.CutPrefix(l, "0x"); ok {
		_, err := strconv.ParseUint("0"+rest, 16, 64)
		return err == nil || errors.Is(err, strconv.ErrRange)
	}
	for _, c := range []byte(l) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// splitAuthority parses host:port as a CONNECT request or a URL carries
// it; defaultPort stands for a missing port (0: the port is required).
func splitAuthority(hostport string, defaultPort int) (string, int, error) {
	host, portStr, err := net.SplitHostPort(hostport)
	if err != nil {
		if defaultPort == 0 {
			return "", 0, fmt.Errorf("%q is not host:port", hostport)
		}
		host, portStr = hostport, ""
	}
	port := defaultPort
	if portStr != "" {
		n, err := strconv.Atoi(portStr)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, fmt.Errorf("%q: the port is not a number from 1 to 65535", hostport)
		}
		port = n
	}
	host, err = canonHost(host)
	if err != nil {
		return "", 0, err
	}
	return host, port, nil
}

// socksReply is the SOCKS5 reply code for f.
func (f *failure) socksReply() byte {
	switch f.kind {
	case failRefused:
		return socksNotAllowed
	case failUnresolved:
		return socksHostUnreachable
	}
	switch {
	case errors.Is(f.err, syscall.ECONNREFUSED):
		return socksConnRefused
	case errors.Is(f.err, syscall.ENETUNREACH):
		return socksNetUnreachable
	}
	return socksHostUnreachable
}
