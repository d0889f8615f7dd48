package guard

import (
	"path/filepath"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// TestCheck_SendsWhatItJudged: each role argument reaches the plugin as
// the guard resolved and judged it, never as the model's text for the
// plugin to interpret again.
func TestCheck_SendsWhatItJudged(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.guard(func(o *Options) {
		o.Policy = &policy.Rules{Network: policy.NetworkRules{Allow: []string{"localhost", "example.com"}}}
	})
	ws := f.ws
	netRoles := map[string]sdk.Role{"url": sdk.RoleURL}
	listRoles := map[string]sdk.Role{"paths": sdk.RolePathRead}
	for _, tc := range []struct {
		name   string
		sp     sdk.Spec
		args   map[string]any
		param  string
		want   any
		action adapter.Action
	}{
		{"relative read", spec(sdk.EffectRead, readRoles), readArgs("sub/a.go"), "path", filepath.Join(ws, "sub", "a.go"), adapter.Allow},
		{"leading space is part of the name", spec(sdk.EffectRead, readRoles), readArgs(" " + f.other), "path", filepath.Join(ws, " "+f.other), adapter.Allow},
		{"trailing spaces are part of the name", spec(sdk.EffectRead, readRoles), readArgs("README.md  "), "path", filepath.Join(ws, "README.md  "), adapter.Allow},
		{"empty is the workspace", spec(sdk.EffectRead, readRoles), readArgs(""), "path", ws, adapter.Allow},
		{"~ expanded", spec(sdk.EffectRead, readRoles), readArgs("~/.ssh/id_rsa"), "path", filepath.Join(f.home, ".ssh", "id_rsa"), adapter.Ask},
		{"symlink inside followed", spec(sdk.EffectRead, readRoles), readArgs("inner/a.go"), "path", filepath.Join(ws, "sub", "a.go"), adapter.Allow},
		{"symlink out followed", spec(sdk.EffectRead, readRoles), readArgs("escfile"), "path", filepath.Join(f.other, "secret"), adapter.Ask},
		{"dot-dot cleaned as judged", spec(sdk.EffectRead, readRoles), readArgs("sub/../README.md"), "path", filepath.Join(ws, "README.md"), adapter.Allow},
		{"write not yet there", spec(sdk.EffectWrite, writeRoles), readArgs("new/dir/f.txt"), "path", filepath.Join(ws, "new", "dir", "f.txt"), adapter.Allow},
		{"array of paths", spec(sdk.EffectRead, listRoles), map[string]any{"paths": []any{"sub/a.go", 3.0, "README.md"}}, "paths",
			[]any{filepath.Join(ws, "sub", "a.go"), 3.0, filepath.Join(ws, "README.md")}, adapter.Allow},
		{"bare localhost gets http", spec(sdk.EffectNetwork, netRoles), map[string]any{"url": "localhost:8080"}, "url", "http://localhost:8080", adapter.Allow},
		{"bare host gets https", spec(sdk.EffectNetwork, netRoles), map[string]any{"url": "example.com/a"}, "url", "https://example.com/a", adapter.Allow},
		{"browser bare host", spec(sdk.EffectBrowser, netRoles), map[string]any{"url": "localhost:3000"}, "url", "http://localhost:3000", adapter.Allow},
		{"spaces around a URL dropped", spec(sdk.EffectNetwork, netRoles), map[string]any{"url": " https://example.com "}, "url", "https://example.com", adapter.Allow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := check(g, tc.sp, tc.args)
			if d.Action != tc.action {
				t.Errorf("Check(%v): %v (%s), want %v", tc.args, d.Action, d.Reason, tc.action)
			}
			if d.Args == nil {
				t.Fatalf("Check(%v): Args nil, want %s = %v", tc.args, tc.param, tc.want)
			}
			if got := d.Args[tc.param]; !equalAny(got, tc.want) {
				t.Errorf("Check(%v): sends %s = %#v, want %#v", tc.args, tc.param, got, tc.want)
			}
		})
	}
}

// TestCheck_UnchangedArgsStayNil: a call whose role arguments are already
// resolved is sent as validated, and other parameters are never touched.
func TestCheck_UnchangedArgsStayNil(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.guard(nil)
	args := map[string]any{"path": filepath.Join(f.ws, "README.md"), "pattern": " keep "}
	if d := check(g, spec(sdk.EffectRead, readRoles), args); d.Args != nil {
		t.Errorf("Check: Args = %v, want nil for resolved input", d.Args)
	}
	args["path"] = "README.md"
	d := check(g, spec(sdk.EffectRead, readRoles), args)
	if d.Args["pattern"] != " keep " {
		t.Errorf("Check: pattern = %q, want it untouched", d.Args["pattern"])
	}
	if args["path"] != "README.md" {
		t.Errorf("Check changed the caller's map: path = %v", args["path"])
	}
}

func equalAny(a, b any) bool {
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok != bok {
		return false
	}
	if !aok {
		return a == b
	}
	if len(as) != len(bs) {
		return false
	}
	for i := range as {
		if as[i] != bs[i] {
			return false
		}
	}
	return true
}
