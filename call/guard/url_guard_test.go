package guard

import (
	"strings"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/sdk"
)

// registrySpec is the registry's spec of a first-party tool, as the host
// binds it whatever its plugin declares.
func registrySpec(t *testing.T, name string) sdk.Spec {
	t.Helper()
	st, ok := toolspec.Lookup(name)
	if !ok {
		t.Fatalf("%s is not in the registry", name)
	}
	return st.Bind(sdk.Spec{Name: name, Effect: sdk.EffectNone})
}

// TestCheckURL_HostsOfThisMachine: the browser's navigation is judged as
// web_fetch is: a host the profile grants, else ask; a host of this
// machine or its networks asks in every spelling a browser reads as one,
// and only an entry naming it exactly grants it.
func TestCheckURL_HostsOfThisMachine(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	nav, fetch, tabs := registrySpec(t, "browser_navigate"), registrySpec(t, "web_fetch"), registrySpec(t, "browser_tabs")
	plain := f.guard(nil)
	globs := f.guard(func(o *Options) { o.Policy.Network.Allow = []string{"*", "*.*", "*.localhost"} })
	exact := f.guard(func(o *Options) {
		o.Policy.Network.Allow = []string{"example.com", "localhost", "127.0.0.1", "[::1]", "10.1.2.3", "*.example.org"}
	})
	internal := []string{
		"http://127.0.0.1:8080/",
		"http://127.9.8.7/",
		"http://localhost:3000/x",
		"http://LOCALHOST./",
		"http://localhost../",
		"http://app.localhost/",
		"http://[::1]:9000/",
		"http://[::]/",
		"http://0.0.0.0:8080/",
		"http://0/",
		"http://10.0.0.1/",
		"http://172.16.0.1/",
		"http://172.31.255.255/",
		"http://192.168.1.1/",
		"http://100.64.0.1/",
		"http://169.254.169.254/latest/meta-data/",
		"http://[fe80::1%25eth0]/",
		"http://[fd00::1]/",
		"http://[fc00::1]/",
		"http://[::ffff:127.0.0.1]/",
		"http://[::ffff:7f00:1]/",
		"http://[::ffff:169.254.169.254]/",
		"http://[::127.0.0.1]/",
		"http://[64:ff9b::a9fe:a9fe]/",
		"http://2130706433/",
		"http://0x7f.1/",
		"http://0x7F000001/",
		"http://0177.0.0.1/",
		"http://127.1/",
		"http://127.0.1/",
		"http://0xa9.0xfe.0xa9.0xfe/",
		"http://3232235777/",
		"http://127.0.0.1./",
		"https://%EF%BC%91%EF%BC%92%EF%BC%97.%EF%BC%90.%EF%BC%90.%EF%BC%91/",
		"http://１２７.０.０.１/",
		"http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/",
		"localhost:8080",
		"127.0.0.1",
	}
	denies := f.guard(func(o *Options) {
		o.Policy.Network.Allow = []string{"*.example.com"}
		o.Policy.Network.Deny = []string{"evil.example.com", "169.254.169.254"}
	})
	closed := f.guard(func(o *Options) {
		o.Policy.Network.Allow = []string{"example.com"}
		o.Policy.Network.Unlisted = "deny"
	})
	cases := []struct {
		g    *WorkspaceGuard
		urls []string
		want adapter.Action
	}{
		{denies, []string{"https://a.example.com/", "https://A.B.Example.com./x"}, adapter.Allow},
		{denies, []string{"https://evil.example.com/", "https://EVIL.example.com./", "http://169.254.169.254/", "http://0xa9fea9fe/",
			"http://[::ffff:169.254.169.254]/"}, adapter.Deny},
		{denies, []string{"https://example.net/", "http://127.0.0.1/"}, adapter.Ask},
		{closed, []string{"https://example.com/"}, adapter.Allow},
		{closed, []string{"https://example.net/", "http://127.0.0.1/", "http://localhost/"}, adapter.Deny},
		{plain, internal, adapter.Ask},
		{globs, internal, adapter.Ask},
		{plain, []string{"https://example.com/", "example.com"}, adapter.Ask},
		{globs, []string{"https://example.com/", "http://a.b.example/", "http://my_host.example/"}, adapter.Allow},
		{exact, []string{"https://example.com/", "https://EXAMPLE.com./", "https://a.example.org/",
			"http://localhost:1/", "http://localhost./", "http://127.0.0.1/", "http://2130706433/", "http://0x7f.1/",
			"http://[::1]/", "http://[::ffff:10.1.2.3]/", "http://10.1.2.3/", "localhost:8080"}, adapter.Allow},
		{exact, []string{"http://127.0.0.2/", "http://app.localhost/", "http://10.1.2.4/", "http://169.254.169.254/",
			"https://example.net/", "https://example.com.evil.test/"}, adapter.Ask},
		// Hosts a browser refuses, or reads as no host: asked, not guessed.
		{globs, []string{"http://1.2.3.4.5/", "http://0x100000000/", "http://256.0.0.1/", "http://1.2.3.08/",
			"http:127.0.0.1", "http:///x", "http:///127.0.0.1/", `http:\\127.0.0.1\`, `http://127.0.0.1\@example.com/`,
			`http://example.com\@127.0.0.1/`, "http://[::1]@example.com/", "file:///etc/passwd", "javascript:alert(1)",
			"view-source:http://127.0.0.1/", "ftp://127.0.0.1/"}, adapter.Ask},
	}
	for _, tc := range cases {
		for _, u := range tc.urls {
			for _, tool := range []struct {
				spec  sdk.Spec
				param string
				args  map[string]any
			}{
				{nav, "url", map[string]any{"url": u}},
				{fetch, "url", map[string]any{"url": u}},
				{tabs, "url", map[string]any{"action": "new", "url": u}},
			} {
				d := check(tc.g, tool.spec, tool.args)
				if d.Action != tc.want {
					t.Errorf("%s %q with network.allow %v = %v (%s), want %v", tool.spec.Name, u, tc.g.network.Allow, d.Action, d.Reason, tc.want)
				}
			}
		}
	}
	// A refusal names the entry and says not to go round it.
	d := check(denies, fetch, map[string]any{"url": "https://evil.example.com/x"})
	if !strings.Contains(d.Reason, "network.deny entry evil.example.com") || !strings.Contains(d.Hint, "another way") || d.Rule != "network.deny: evil.example.com" {
		t.Errorf("web_fetch of a denied host: %q (hint %q, rule %q); want the entry named and the advice not to go round it", d.Reason, d.Hint, d.Rule)
	}
	// The question says what the host is, in the spelling judged.
	d = check(globs, nav, map[string]any{"url": "http://0x7f.1:8080/"})
	if !strings.Contains(d.Reason, "127.0.0.1") || !strings.Contains(d.Reason, "loopback") || !strings.Contains(d.Hint, "network.allow") {
		t.Errorf("browser_navigate http://0x7f.1:8080/ asked %q (hint %q); want it to name 127.0.0.1 as loopback and the grant that would allow it", d.Reason, d.Hint)
	}
}
