package sdk

import (
	"context"
	"testing"
)

func TestNormalizeURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"https://example.com/a?b#c", "https://example.com/a?b#c"},
		{"example.com", "https://example.com"},
		{"example.com:8443/x", "https://example.com:8443/x"},
		{"localhost:8080", "http://localhost:8080"},
		{"127.0.0.1:8080/x", "http://127.0.0.1:8080/x"},
		{"[::1]:9000", "http://[::1]:9000"},
		{"app.localhost", "http://app.localhost"},
		{" http://a.test/ ", "http://a.test/"},
		{"about:blank", "about:blank"},
		{"file:///etc/hosts", "file:///etc/hosts"},
	} {
		got, err := NormalizeURL(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("NormalizeURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			continue
		}
		if again, err := NormalizeURL(got); err != nil || again != got {
			t.Errorf("NormalizeURL(%q) = %q, %v; want it unchanged (idempotent)", got, again, err)
		}
	}
	for _, bad := range []string{"", "  ", "http://[::1"} {
		if got, err := NormalizeURL(bad); err == nil {
			t.Errorf("NormalizeURL(%q) = %q, want an error", bad, got)
		}
	}
}

func TestPathArg(t *testing.T) {
	t.Parallel()
	ctx := WithCall(context.Background(), CallInfo{Workspace: "/ws"})
	for _, tc := range []struct{ in, want string }{
		{"/abs/x", "/abs/x"},
		{"/ws/ lead", "/ws/ lead"},
		{"/ws/trail  ", "/ws/trail  "},
		{"rel/a.txt", "/ws/rel/a.txt"},
		{" /abs", "/ws/ /abs"},
	} {
		if got, err := PathArg(ctx, tc.in); err != nil || got != tc.want {
			t.Errorf("PathArg(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if got, err := PathArg(context.Background(), "rel"); err == nil {
		t.Errorf("PathArg without a workspace = %q, want an error", got)
	}
}
