package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk/sandbox"
)

// TestServe_CommandsReachTheNetworkThroughTheSessionsProxy: under
// sandbox.network: proxy a command's traffic leaves through the session's
// proxy, judged by the profile's network table: an allowed upstream
// answers over plain HTTP and through a CONNECT tunnel; a denied name and
// an unlisted one get the proxy's 403 with what was refused, neither
// looked up; and the command's direct connect to the upstream's address
// reaches nothing, its namespace having no way out but the proxy.
func TestServe_CommandsReachTheNetworkThroughTheSessionsProxy(t *testing.T) {
	if !sandbox.Probe().NetNS {
		t.Skip("no network namespaces here: the proxy-only path is TestEgress_WithoutANamespace's")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is needed: apt-get install curl")
	}
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "upstream says %s", r.URL.Path)
	}))
	t.Cleanup(upstream.Close)
	tlsUp := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tls upstream says %s", r.URL.Path)
	}))
	t.Cleanup(tlsUp.Close)

	e := newEnv(t)
	e.userConfig("sandbox: {network: proxy}\nnetwork: {allow: [\"127.0.0.1\"], deny: [denied.example]}\n")
	c := e.serve(nil)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("yagent serve's stderr:\n%s", c.stderr.String())
		}
	})
	run := func(cmd string) string {
		t.Helper()
		r := c.call(t, "run_bash", map[string]any{"command": cmd})
		return text(r)
	}

	// The loopback of the command is its namespace's: NO_PROXY leaves it
	// out, so the upstream on the machine's loopback is named through the
	// proxy explicitly.
	via := `curl -sS --noproxy '' -x "$HTTP_PROXY" `
	if out := run(via + upstream.URL + "/plain"); !strings.Contains(out, "upstream says /plain") {
		t.Errorf("plain HTTP through the proxy: %q", out)
	}
	if out := run(via + "-k " + tlsUp.URL + "/tunnel"); !strings.Contains(out, "tls upstream says /tunnel") {
		t.Errorf("HTTPS through a CONNECT tunnel: %q", out)
	}
	if out := run(`curl -sS --max-time 5 --noproxy '*' ` + upstream.URL + "/direct; echo rc=$?"); strings.Contains(out, "upstream says") || strings.Contains(out, "rc=0") {
		t.Errorf("a direct connect reached the upstream: %q", out)
	}
	for host, want := range map[string]string{
		"denied.example":   "network.deny entry denied.example",
		"unlisted.example": "it was not approved",
	} {
		out := run("curl -sS http://" + host + "/x")
		if !strings.Contains(out, want) || !strings.Contains(out, "yagent refused "+host) {
			t.Errorf("%s: %q, want the proxy's refusal saying %q", host, out, want)
		}
	}
	if out := run("git ls-remote git@git.example:team/repo.git"); !strings.Contains(out, "use the https:// URL of the repository") {
		t.Errorf("git over ssh: %q, want the way that works named", out)
	}
	// Each connection is in the audit trail, found by its decision.
	eventually(t, "the denied connections in the audit trail", func() bool {
		out, err := e.cli("audit", "--kind", "network", "--decision", "deny")
		return err == nil && strings.Contains(out, "denied.example:80") && strings.Contains(out, "network.deny: denied.example")
	})
	env := run("env | grep -i -E '^(https?|all|no)_proxy=' | sort")
	for _, v := range []string{"HTTP_PROXY=http://127.0.0.1:", "HTTPS_PROXY=http://127.0.0.1:", "ALL_PROXY=socks5h://127.0.0.1:", "NO_PROXY=localhost,127.0.0.1,::1", "http_proxy=http://127.0.0.1:"} {
		if !strings.Contains(env, v) {
			t.Errorf("the command's environment lacks %s: %q", v, env)
		}
	}
}
