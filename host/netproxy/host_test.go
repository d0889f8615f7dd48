package netproxy_test

import (
	"testing"

	"github.com/yagent/yagent/host/netproxy"
)

// TestCanonHost: one host has one spelling for the Decider, and what is
// neither a name nor an address in its usual form is refused before any
// question.
func TestCanonHost(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want string // want "" = refused
	}{
		{"allowed.test", "allowed.test"},
		{"Allowed.TEST", "allowed.test"},
		{"allowed.test.", "allowed.test"},
		{"[Allowed.test]", "allowed.test"},
		{"xn--bcher-kva.test", "xn--bcher-kva.test"},
		{"_service.allowed.test", "_service.allowed.test"},
		{"localhost", "localhost"},
		{"127.0.0.1", "127.0.0.1"},
		{"::1", "::1"},
		{"[::1]", "::1"},
		{"::FFFF:127.0.0.1", "127.0.0.1"},
		{"[::ffff:7f00:1]", "127.0.0.1"},
		{"2001:DB8::1", "2001:db8::1"},
		{"1.example", "1.example"},
		{"", ""},
		{".", ""},
		{"allowed..test", ""},
		{".allowed.test", ""},
		{"allowed.test..", ""},
		{"bücher.test", ""},
		{"allowed test", ""},
		{"allowed.test/x", ""},
		{"user@allowed.test", ""},
		{"fe80::1%eth0", ""},
		{"2130706433", ""},
		{"0x7f000001", ""},
		{"0x7f.1", ""},
		{"127.1", ""},
		{"010.0.0.1", ""},
		{"1.2.3.4.5", ""},
		{"allowed.0x", ""},
		{string(make([]byte, 64)) + ".test", ""},
	} {
		got, err := netproxy.CanonHost(c.in)
		if c.want == "" {
			if err == nil {
				t.Errorf("CanonHost(%q) = %q, want an error", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("CanonHost(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
