package main

import (
	"strings"
	"testing"
)

// TestCheckPluginName: init takes the names the host loads a plugin by
// (pluginmgr.ValidName) but those of yagent's own families.
func TestCheckPluginName(t *testing.T) {
	t.Parallel()
	for name, why := range map[string]string{
		"demo": "", "my-tools": "", "team_2": "", "9": "",
		"":       "is not a plugin name",
		"Demo":   "is not a plugin name",
		"a b":    "is not a plugin name",
		"x.y":    "is not a plugin name",
		"../etc": "is not a plugin name",
		"héllo":  "is not a plugin name",
		"fs":     "one of yagent's own plugins",
		"shell":  "one of yagent's own plugins",
	} {
		err := checkPluginName(name)
		switch {
		case why == "" && err != nil:
			t.Errorf("checkPluginName(%q) = %v, want nil", name, err)
		case why != "" && (err == nil || !strings.Contains(err.Error(), why)):
			t.Errorf("checkPluginName(%q) = %v, want an error saying it %s", name, err, why)
		}
	}
}

// TestRequiredYagent: a module written outside a checkout requires this
// binary's version when go.mod can require it, none for a build from a
// development tree.
func TestRequiredYagent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ path, version, want string }{
		{"github.com/yagent/yagent", "v0.4.0", "v0.4.0"},
		{"github.com/yagent/yagent", "v0.0.0-20260101120000-0123456789ab", "v0.0.0-20260101120000-0123456789ab"},
		{"github.com/yagent/yagent", "v0.0.0-20260101120000-0123456789ab+dirty", ""},
		{"github.com/yagent/yagent", "(devel)", ""},
		{"github.com/yagent/yagent", "", ""},
		{"example.com/fork", "v1.0.0", ""},
	} {
		if got := requiredYagent(tc.path, tc.version); got != tc.want {
			t.Errorf("requiredYagent(%s, %s) = %q, want %q", tc.path, tc.version, got, tc.want)
		}
	}
}

func TestGoLine(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]string{"go1.26.8": "1.26.8", "go1.27rc1": "1.27rc1", "devel go1.27-abcdef": "1.26"} {
		if got := goLine(v); got != want {
			t.Errorf("goLine(%q) = %q, want %q", v, got, want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]string{"yagent-plugin-demo": "yagent-plugin-demo", "/tmp/a_b.c": "/tmp/a_b.c", "my dir": "'my dir'", "it's": `'it'\''s'`, "": "''", "$HOME": "'$HOME'"} {
		if got := shellQuote(s); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", s, got, want)
		}
	}
}
