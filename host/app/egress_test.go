package app

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/host/audit"
	"github.com/yagent/yagent/host/authz"
	"github.com/yagent/yagent/host/netproxy"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox"
)

// TestEgress_WithoutANamespace: where the host cannot make a session's
// namespace, the proxy listens on the machine's loopback (the proxy
// variables alone) and still judges by the network table; each session
// has its own, and ending the session stops it.
func TestEgress_WithoutANamespace(t *testing.T) {
	t.Parallel()
	e := newEgress(policy.NetworkRules{Deny: []string{"denied.example"}}, nil, hclog.NewNullLogger(), false)
	t.Cleanup(e.Close)
	a, b := session.New("a"), session.New("b")
	ea, eb := e.For(a), e.For(b)
	if ea == nil || eb == nil || ea.NetNS != "" || !strings.HasPrefix(ea.Proxy, "127.0.0.1:") || ea.Proxy == eb.Proxy {
		t.Fatalf("For: %+v and %+v; want a proxy of its own each on the machine's loopback, no namespace", ea, eb)
	}
	if again := e.For(a); again != ea {
		t.Errorf("For a second time: %+v, want the session's proxy %+v", again, ea)
	}
	if status, body := connectVia(t, ea.Proxy, "denied.example:443"); status != http.StatusForbidden || !strings.Contains(body, "network.deny entry denied.example") {
		t.Errorf("CONNECT denied.example: %d %q, want 403 naming the deny entry", status, body)
	}
	e.End("a")
	if c, err := net.Dial("tcp", ea.Proxy); err == nil {
		c.Close()
		t.Errorf("the ended session's proxy still accepts at %s", ea.Proxy)
	}
	if status, _ := connectVia(t, eb.Proxy, "denied.example:443"); status != http.StatusForbidden {
		t.Errorf("the other session's proxy answered %d after the first ended, want it serving (403)", status)
	}
}

// TestEgress_SessionsNamespaces: with namespaces each session's proxy
// listens in a namespace of its own, which a command enters by its path.
func TestEgress_SessionsNamespaces(t *testing.T) {
	t.Parallel()
	if !sandbox.Probe().NetNS {
		t.Skip("no network namespaces here")
	}
	e := newEgress(policy.NetworkRules{}, nil, hclog.NewNullLogger(), true)
	t.Cleanup(e.Close)
	ea, eb := e.For(session.New("a")), e.For(session.New("b"))
	if ea == nil || eb == nil || ea.NetNS == "" || eb.NetNS == "" || ea.NetNS == eb.NetNS {
		t.Fatalf("For: %+v and %+v; want a namespace of its own each", ea, eb)
	}
	// The listener is inside the namespace: the machine's loopback has
	// nothing there (or something else than this proxy).
	if status, _ := connectVia(t, ea.Proxy, "denied.example:443"); status == http.StatusForbidden {
		t.Errorf("the session's proxy answered on the machine's loopback at %s", ea.Proxy)
	}
}

// connectVia sends a CONNECT for target to the proxy at addr and returns
// the status and body; 0 when nothing answered.
func connectVia(t *testing.T, addr, target string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err.Error()
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	return resp.StatusCode, b.String()
}

// TestEgress_AsksTheSession: a host the table leaves open is asked about
// through the authorization loop while the connection waits: "once" for
// each connection, "session" once per host and session; one session's
// answers give another nothing; a deny entry is never asked about; -y
// approves every ask.
func TestEgress_AsksTheSession(t *testing.T) {
	t.Parallel()
	up := closingUpstream(t)
	target := up.Addr().String()
	for _, c := range []struct {
		name   string
		yolo   bool
		scope  string
		target string
		status []int // of two connections, one after the other
		asked  int
	}{
		{name: "once", scope: session.ScopeOnce, target: target, status: []int{200, 200}, asked: 2},
		{name: "session", scope: session.ScopeSession, target: target, status: []int{200, 200}, asked: 1},
		{name: "declined", scope: "", target: target, status: []int{403, 403}, asked: 2},
		{name: "deny is never asked", scope: session.ScopeSession, target: "denied.example:443", status: []int{403, 403}, asked: 0},
		{name: "yolo", yolo: true, target: target, status: []int{200, 200}, asked: 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := &App{Approver: authz.NewApprover(authz.ApproverOptions{Passes: &authz.Passes{Yolo: c.yolo}})}
			e := newEgress(policy.NetworkRules{Deny: []string{"denied.example"}}, nil, hclog.NewNullLogger(), false)
			e.ask = a.askNetwork
			t.Cleanup(e.Close)
			sess, other := session.New("s"), session.New("other")
			tty := &answerer{ans: session.ApprovalAnswer{Approved: c.scope != "", Scope: c.scope}}
			sess.SetAnswerer(tty)
			otherTTY := &answerer{}
			other.SetAnswerer(otherTTY)
			proxy := e.For(sess).Proxy
			for i, want := range c.status {
				if status, body := connectVia(t, proxy, c.target); status != want {
					t.Errorf("connection %d: %d %q, want %d", i+1, status, body, want)
				} else if want == 403 && !strings.Contains(body, "do not try to reach it another way") {
					t.Errorf("connection %d: refusal %q does not tell the model not to go round it", i+1, body)
				}
			}
			if n := tty.n(); n != c.asked {
				t.Errorf("the session was asked %d times, want %d", n, c.asked)
			}
			if status, _ := connectVia(t, e.For(other).Proxy, target); c.yolo != (status == 200) || otherTTY.n() != boolInt(!c.yolo) {
				t.Errorf("the other session: %d after %d questions; its own answer (a decline) decides, not the first session's", status, otherTTY.n())
			}
		})
	}
}

// TestEgress_QuestionNamesTheCommand: a question about a host names the
// command of the session's call in flight (the egress observes the calls);
// with none running it says the command was started in the background. A
// call refused, or of a tool that takes no command, names nothing.
func TestEgress_QuestionNamesTheCommand(t *testing.T) {
	t.Parallel()
	up := closingUpstream(t)
	a := &App{Approver: authz.NewApprover(authz.ApproverOptions{Passes: &authz.Passes{}})}
	e := newEgress(policy.NetworkRules{}, nil, hclog.NewNullLogger(), false)
	e.ask = a.askNetwork
	t.Cleanup(e.Close)
	sess := session.New("s")
	tty := &answerer{ans: session.ApprovalAnswer{Approved: true, Scope: session.ScopeOnce}}
	sess.SetAnswerer(tty)
	proxy := e.For(sess).Proxy
	cmdRoles := map[string]sdk.Role{"command": sdk.RoleCommand}
	run := &adapter.CallRecord{ID: "c1", SessionID: "s", Roles: cmdRoles, Args: map[string]any{"command": "npm install left-pad"}, Allowed: true}
	refused := &adapter.CallRecord{ID: "c2", SessionID: "s", Roles: cmdRoles, Args: map[string]any{"command": "curl evil"}}
	read := &adapter.CallRecord{ID: "c3", SessionID: "s", Roles: map[string]sdk.Role{"path": sdk.RolePathRead}, Args: map[string]any{"path": "/etc/hosts"}, Allowed: true}
	for _, rec := range []*adapter.CallRecord{run, refused, read} {
		if err := e.Decide(t.Context(), rec); err != nil {
			t.Fatal(err)
		}
	}
	target := up.Addr().String()
	if status, _ := connectVia(t, proxy, target); status != 200 {
		t.Fatalf("the approved connection: %d", status)
	}
	if q := tty.last(); !strings.HasPrefix(q, "the command `npm install left-pad` connects to "+target) {
		t.Errorf("the question %q does not name the running command alone", q)
	}
	e.Finish(t.Context(), run, nil)
	connectVia(t, proxy, target)
	if q := tty.last(); !strings.Contains(q, "none is running now") || strings.Contains(q, "npm") {
		t.Errorf("the question after the call returned: %q, want the background named", q)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// answerer answers every question with ans and keeps them.
type answerer struct {
	mu      sync.Mutex
	count   int
	reasons []string
	ans     session.ApprovalAnswer
}

func (a *answerer) Approve(_ context.Context, p session.ApprovalPrompt) (session.ApprovalAnswer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.count++
	a.reasons = append(a.reasons, p.Reason)
	return a.ans, nil
}

func (a *answerer) last() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.reasons) == 0 {
		return ""
	}
	return a.reasons[len(a.reasons)-1]
}

func (a *answerer) Help(context.Context, string) (string, error) { return "", nil }

func (a *answerer) n() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.count
}

// TestEgress_AuditTrail: every connection through a session's proxy is a
// "network" line of the audit trail: the target, the address connected
// to, the table's answer and its entry, who answered a question, the
// bytes; `yagent audit --kind network --decision deny` and `--by user`
// find them.
func TestEgress_AuditTrail(t *testing.T) {
	t.Parallel()
	up := closingUpstream(t)
	dir := filepath.Join(t.TempDir(), "audit")
	ob := audit.New(audit.Options{Writer: audit.NewWriter(audit.WriterOptions{Dir: dir})})
	a := &App{Approver: authz.NewApprover(authz.ApproverOptions{Passes: &authz.Passes{}})}
	// The name is asked about; the address it resolves to is allowed by
	// its block: the line keeps the ask, the stricter of the two.
	upAddr := up.Addr().(*net.TCPAddr).AddrPort()
	e := newEgress(policy.NetworkRules{Allow: []string{"127.0.0.0/8"}, Deny: []string{"denied.example"}},
		mapResolver{"asked.test": upAddr.Addr()}, hclog.NewNullLogger(), false)
	e.ask, e.record = a.askNetwork, ob.RecordNetwork
	sess := session.New("s1")
	sess.SetAnswerer(&answerer{ans: session.ApprovalAnswer{Approved: true, Scope: session.ScopeOnce}})
	proxy := e.For(sess).Proxy
	if status, _ := connectVia(t, proxy, fmt.Sprintf("asked.test:%d", upAddr.Port())); status != 200 {
		t.Fatalf("the asked connection: %d", status)
	}
	if status, _ := connectVia(t, proxy, "denied.example:443"); status != 403 {
		t.Fatalf("the denied connection: %d", status)
	}
	e.Close() // every connection's line is written once its proxy is closed
	if err := ob.Close(); err != nil {
		t.Fatal(err)
	}
	read := func(f audit.Filter) []*audit.Line {
		var got []*audit.Line
		r := &audit.Reader{Dir: dir, Filter: f}
		if err := r.Read(t.Context(), func(l *audit.Line) error { got = append(got, l); return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if all := read(audit.Filter{Kind: audit.KindNetwork}); len(all) != 2 {
		t.Fatalf("%d network lines, want 2", len(all))
	}
	denied := read(audit.Filter{Kind: audit.KindNetwork, Decision: "deny"})
	if len(denied) != 1 || denied[0].Host != "denied.example" || denied[0].Port != 443 || denied[0].Rule != "network.deny: denied.example" ||
		denied[0].Allowed == nil || *denied[0].Allowed || denied[0].Session != "s1" {
		t.Errorf("deny lines: %+v, want the one to denied.example:443 with its entry", denied)
	}
	asked := read(audit.Filter{Kind: audit.KindNetwork, By: "user"})
	if len(asked) != 1 || asked[0].Decision != "ask" || asked[0].Answer == nil || !asked[0].Answer.Approved ||
		asked[0].Addr != up.Addr().String() || asked[0].Allowed == nil || !*asked[0].Allowed || asked[0].Proto != "connect" {
		t.Errorf("lines answered by the user: %+v, want the asked connection, approved, with the address connected to", asked)
	}
}

// mapResolver resolves the names it holds, each to one address.
type mapResolver map[string]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := m[host]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// closingUpstream listens on the machine's loopback and hangs up on every
// connection it accepts, until the test ends.
func closingUpstream(t *testing.T) net.Listener {
	t.Helper()
	up, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return up
}

// TestEgress_Pages: the browser's proxy of a session listens on the
// machine's loopback apart from its commands' and never asks: a loopback
// origin is refused until a navigation to it was approved in that session
// (any spelling of the same origin), and one session's approval opens
// nothing to another's pages.
func TestEgress_Pages(t *testing.T) {
	t.Parallel()
	up := closingUpstream(t)
	_, port, _ := net.SplitHostPort(up.Addr().String())
	e := newEgress(policy.NetworkRules{}, nil, hclog.NewNullLogger(), sandbox.Probe().NetNS)
	t.Cleanup(e.Close)
	e.ask = func(context.Context, *session.Session, netproxy.Target, policy.NetDecision, string) error {
		t.Error("a page's request was asked about")
		return nil
	}
	a, b := session.New("a"), session.New("b")
	pa, pb := e.Pages(a, nil), e.Pages(b, nil)
	if pa == nil || pb == nil || pa.NetNS != "" || !strings.HasPrefix(pa.Proxy, "127.0.0.1:") || pa.Proxy == pb.Proxy {
		t.Fatalf("Pages: %+v and %+v; want a proxy of its own each on the machine's loopback", pa, pb)
	}
	if ca := e.For(a); ca == nil || ca.Proxy == pa.Proxy && ca.NetNS == "" {
		t.Errorf("the commands' proxy %+v is the pages' %+v", ca, pa)
	}
	target := "127.0.0.1:" + port
	if status, body := connectVia(t, pa.Proxy, target); status != http.StatusForbidden || !strings.Contains(body, "the request to "+target) {
		t.Errorf("a page's CONNECT %s before any navigation: %d %q, want the page rule's 403", target, status, body)
	}
	if again := e.Pages(a, []string{"http://0x7f.1:" + port + "/app"}); again.Proxy != pa.Proxy {
		t.Errorf("Pages a second time: %+v, want the session's %+v", again, pa)
	}
	if status, _ := connectVia(t, pa.Proxy, target); status != http.StatusOK {
		t.Errorf("CONNECT %s after the approved navigation: %d, want 200", target, status)
	}
	if status, _ := connectVia(t, pb.Proxy, target); status != http.StatusForbidden {
		t.Errorf("the other session's page reached %s: %d, want 403", target, status)
	}
}
