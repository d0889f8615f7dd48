package tools

import (
	"testing"

	"github.com/yagent/yagent/sdk"
)

func TestNormalizeURL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, want string
		added    bool
	}{
		{"https://example.com/a?b#c", "https://example.com/a?b#c", false},
		{"example.com", "https://example.com", true},
		{"example.com/path?q=1", "https://example.com/path?q=1", true},
		{"example.com:8443/x", "https://example.com:8443/x", true},
		{"localhost:3000", "http://localhost:3000", true},
		{"127.0.0.1:8080/x", "http://127.0.0.1:8080/x", true},
		{"[::1]:9000", "http://[::1]:9000", true},
		{"app.localhost", "http://app.localhost", true},
		{"about:blank", "about:blank", false},
		{"data:text/html,<p>x</p>", "data:text/html,<p>x</p>", false},
		{"file:///etc/hosts", "file:///etc/hosts", false},
		{"chrome://version", "chrome://version", false},
	}
	for _, tc := range cases {
		got, added, err := normalizeURL(tc.in)
		if err != nil || got != tc.want || added != tc.added {
			t.Errorf("normalizeURL(%q) = %q, %v, %v; want %q, %v", tc.in, got, added, err, tc.want, tc.added)
		}
	}
	for _, bad := range []string{"", "   ", "http://[::1"} {
		if _, _, err := normalizeURL(bad); err == nil {
			t.Errorf("normalizeURL(%q) accepted", bad)
		} else if te, ok := sdk.AsToolError(err); !ok || te.Code != sdk.CodeInvalidInput {
			t.Errorf("normalizeURL(%q): %v, want invalid_input", bad, err)
		}
	}
}

func TestWebScheme(t *testing.T) {
	t.Parallel()
	for u, want := range map[string]bool{
		"http://a/": true, "HTTPS://a/": true, "about:blank": true,
		"file:///etc/passwd": false, "chrome://settings": false, "javascript:alert(1)": false, "data:text/html,x": false,
	} {
		if got := webScheme(u); got != want {
			t.Errorf("webScheme(%q) = %v, want %v", u, got, want)
		}
	}
}

// TestSentURL: browser_navigate opens the URL the host judged, as it is;
// one that did not come through the host's normalization is refused, not
// completed again.
func TestSentURL(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"http://localhost:8080", "https://example.com/a?b", "about:blank"} {
		if got, err := sentURL(ok); err != nil || got != ok {
			t.Errorf("sentURL(%q) = %q, %v; want it as it is", ok, got, err)
		}
	}
	for _, bad := range []string{"localhost:8080", "example.com", " http://a.test", "http://a.test\n", ""} {
		if got, err := sentURL(bad); err == nil {
			t.Errorf("sentURL(%q) = %q, want invalid_input", bad, got)
		}
	}
}
