package netproxy_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/host/netproxy"
)

// waitLimit bounds every wait for something that must happen; it is
// reached only when the behaviour under test is broken.
const waitLimit = 10 * time.Second

// TestMain fails the run when a goroutine of the proxy, or an HTTP
// connection's, outlives the tests: every test closes its proxy, and Close
// promises to wait for what it started.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if left := lingering(); left != "" {
			fmt.Fprintf(os.Stderr, "goroutines left after the tests:\n%s\n", left)
			code = 1
		}
	}
	os.Exit(code)
}

// lingering returns the stacks of goroutines that belong to a proxy or to
// an HTTP connection, once they have had waitLimit to end.
func lingering() string {
	markers := []string{
		"yagent/host/netproxy.", // the package's frames; the tests' are netproxy_test.
		"net/http.(*conn).serve",
		"net/http.(*persistConn)",
	}
	deadline := time.Now().Add(waitLimit)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var left []string
		for g := range strings.SplitSeq(string(buf), "\n\n") {
			for _, m := range markers {
				if strings.Contains(g, m) {
					left = append(left, g)
					break
				}
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return strings.Join(left, "\n\n")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wait receives from ch, failing the test if nothing comes.
func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("%s did not happen", what)
		panic("unreachable")
	}
}

// resolver maps names to addresses and counts the lookups of each.
type resolver struct {
	mu    sync.Mutex
	hosts map[string][]netip.Addr
	calls map[string]int
}

func newResolver(hosts map[string][]netip.Addr) *resolver {
	return &resolver{hosts: hosts, calls: map[string]int{}}
}

func (r *resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[host]++
	if a, ok := r.hosts[host]; ok {
		return slices.Clone(a), nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (r *resolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

func (r *resolver) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for v := range maps.Values(r.calls) {
		n += v
	}
	return n
}

// decider refuses the hosts in deny by name, fails with errs' error for
// those, and keeps the addresses keep accepts (all when nil). It records
// every question.
type decider struct {
	deny map[string]bool
	errs map[string]error
	keep func(netip.Addr) bool

	mu    sync.Mutex
	names []netproxy.Target
	addrs []addrsCall
}

type addrsCall struct {
	target netproxy.Target
	addrs  []netip.Addr
}

func refusal(host string) string { return host + " is not on this session's allow list" }

func (d *decider) Name(_ context.Context, t netproxy.Target) error {
	d.mu.Lock()
	d.names = append(d.names, t)
	d.mu.Unlock()
	if d.deny[t.Host] {
		return &netproxy.Refusal{Message: refusal(t.Host)}
	}
	return d.errs[t.Host]
}

func (d *decider) Addrs(_ context.Context, t netproxy.Target, addrs []netip.Addr) ([]netip.Addr, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, addrsCall{t, slices.Clone(addrs)})
	d.mu.Unlock()
	if d.keep == nil {
		return addrs, nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		if d.keep(a) {
			out = append(out, a)
		}
	}
	return out, nil
}

func (d *decider) calls() ([]netproxy.Target, []addrsCall) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.names), slices.Clone(d.addrs)
}

// blockingDecider's Name waits for its context to end, as a question no
// user answers does; it reports the question on entered and the end of the
// context on released, and then waits for hold, if set, before it
// returns.
type blockingDecider struct {
	entered  chan netproxy.Target
	released chan error
	hold     chan struct{}
}

func newBlockingDecider() *blockingDecider {
	return &blockingDecider{entered: make(chan netproxy.Target, 1), released: make(chan error, 1)}
}

func (d *blockingDecider) Name(ctx context.Context, t netproxy.Target) error {
	d.entered <- t
	<-ctx.Done()
	d.released <- ctx.Err()
	if d.hold != nil {
		<-d.hold
	}
	return ctx.Err()
}

func (d *blockingDecider) Addrs(_ context.Context, _ netproxy.Target, addrs []netip.Addr) ([]netip.Addr, error) {
	return addrs, nil
}

// recorder collects the proxy's Events.
type recorder struct{ ch chan netproxy.Event }

func newRecorder() *recorder { return &recorder{ch: make(chan netproxy.Event, 64)} }

func (r *recorder) record(ev netproxy.Event) { r.ch <- ev }

func (r *recorder) next(t *testing.T) netproxy.Event {
	t.Helper()
	return wait(t, r.ch, "an Event")
}

// none fails if an Event is waiting.
func (r *recorder) none(t *testing.T) {
	t.Helper()
	select {
	case ev := <-r.ch:
		t.Errorf("unexpected Event %+v", ev)
	default:
	}
}

// startProxy serves a proxy on 127.0.0.1 until the test ends, when it is
// closed and its Serve must have returned ErrClosed.
func startProxy(t *testing.T, o netproxy.Options) (*netproxy.Proxy, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, o, l), l.Addr().String()
}

func serveOn(t *testing.T, o netproxy.Options, l net.Listener) *netproxy.Proxy {
	t.Helper()
	p := netproxy.New(o)
	served := make(chan error, 1)
	go func() { served <- p.Serve(l) }()
	t.Cleanup(func() {
		closeProxy(t, p)
		if err := wait(t, served, "Serve's return"); !errors.Is(err, netproxy.ErrClosed) {
			t.Errorf("Serve returned %v, want ErrClosed", err)
		}
	})
	return p
}

// closeProxy closes p, failing the test if Close errs or does not return.
func closeProxy(t *testing.T, p *netproxy.Proxy) {
	t.Helper()
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	if err := wait(t, closed, "Close's return"); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// echoServer is a TCP server on 127.0.0.1 that sends back what it reads
// and hangs up after the client's end of stream; ended receives one value
// per connection it is done with.
type echoServer struct {
	addr  netip.AddrPort
	ended chan struct{}
}

func newEcho(t *testing.T) *echoServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &echoServer{addr: l.Addr().(*net.TCPAddr).AddrPort(), ended: make(chan struct{}, 64)}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
	)
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Go(func() {
				_, _ = io.Copy(c, c)
				_ = c.Close()
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
				e.ended <- struct{}{}
			})
		}
	})
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		for c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return e
}

// dialLog is a Dial option that records each address dialed and fails
// those in fail without dialing them.
type dialLog struct {
	mu     sync.Mutex
	dialed []netip.AddrPort
	fail   map[netip.Addr]bool
}

func (d *dialLog) dial(ctx context.Context, network string, addr netip.AddrPort) (net.Conn, error) {
	d.mu.Lock()
	d.dialed = append(d.dialed, addr)
	d.mu.Unlock()
	if d.fail[addr.Addr()] {
		return nil, &net.OpError{Op: "dial", Net: network, Addr: net.TCPAddrFromAddrPort(addr), Err: os.NewSyscallError("connect", errConnRefused)}
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, addr.String())
}

func (d *dialLog) addrs() []netip.AddrPort {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.dialed)
}

// errConnRefused is the error a refused dial carries.
var errConnRefused = syscall.ECONNREFUSED

// connect sends a CONNECT for target on a new connection to the proxy and
// reads the answer; after a 200, the tunnel is c through br.
func connect(t *testing.T, proxyAddr, target string) (resp *http.Response, c net.Conn, br *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target); err != nil {
		t.Fatal(err)
	}
	br = bufio.NewReader(c)
	resp, err = http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	return resp, c, br
}

// readBody reads and closes a response's body.
func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// roundTrip writes msg into a tunnel and reads as many bytes back.
func roundTrip(t *testing.T, w io.Writer, r io.Reader, msg string) {
	t.Helper()
	if _, err := io.WriteString(w, msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(r, got); err != nil {
		t.Fatalf("reading the echo of %q: %v", msg, err)
	}
	if string(got) != msg {
		t.Fatalf("echo: got %q, want %q", got, msg)
	}
}

// socksClient runs a SOCKS5 handshake by hand, so a test sees the reply
// codes.
type socksClient struct {
	c net.Conn
}

func dialSOCKS(t *testing.T, proxyAddr string) *socksClient {
	t.Helper()
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &socksClient{c: c}
}

// hello offers methods and returns the method the proxy chose.
func (s *socksClient) hello(t *testing.T, methods ...byte) byte {
	t.Helper()
	if _, err := s.c.Write(append([]byte{5, byte(len(methods))}, methods...)); err != nil {
		t.Fatal(err)
	}
	var b [2]byte
	if _, err := io.ReadFull(s.c, b[:]); err != nil {
		t.Fatalf("reading the method selection: %v", err)
	}
	if b[0] != 5 {
		t.Fatalf("method selection version %#x, want 5", b[0])
	}
	return b[1]
}

// send writes a request for host:port with cmd, host as an address type
// of its own if it is an IP address, else as a domain name.
func (s *socksClient) send(t *testing.T, cmd byte, host string, port int) {
	t.Helper()
	req := []byte{5, cmd, 0}
	if a, err := netip.ParseAddr(host); err == nil && a.Is4() {
		b := a.As4()
		req = append(append(req, 1), b[:]...)
	} else if err == nil {
		b := a.As16()
		req = append(append(req, 4), b[:]...)
	} else {
		req = append(append(req, 3, byte(len(host))), host...)
	}
	req = append(req, byte(port>>8), byte(port))
	if _, err := s.c.Write(req); err != nil {
		t.Fatal(err)
	}
}

// reply reads the reply to a request.
func (s *socksClient) reply(t *testing.T) (code byte, bound netip.AddrPort) {
	t.Helper()
	var hdr [4]byte
	if _, err := io.ReadFull(s.c, hdr[:]); err != nil {
		t.Fatalf("reading the reply: %v", err)
	}
	var a netip.Addr
	switch hdr[3] {
	case 1:
		var b [4]byte
		if _, err := io.ReadFull(s.c, b[:]); err != nil {
			t.Fatal(err)
		}
		a = netip.AddrFrom4(b)
	case 4:
		var b [16]byte
		if _, err := io.ReadFull(s.c, b[:]); err != nil {
			t.Fatal(err)
		}
		a = netip.AddrFrom16(b)
	default:
		t.Fatalf("reply address type %#x", hdr[3])
	}
	var p [2]byte
	if _, err := io.ReadFull(s.c, p[:]); err != nil {
		t.Fatal(err)
	}
	return hdr[1], netip.AddrPortFrom(a, uint16(p[0])<<8|uint16(p[1]))
}

// closed fails unless the proxy hangs up without sending more.
func closed(t *testing.T, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(waitLimit))
	n, err := c.Read(make([]byte, 1))
	if n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read after the end: %d bytes, %v; want the connection closed", n, err)
	}
}
