package tools

import "testing"

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
