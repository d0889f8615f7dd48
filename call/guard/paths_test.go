package guard

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// TestWorkspaceGuard_HostilePaths: no path reaches outside the workspace
// without approval, for reads and for writes; benign names are allowed
// without asking.
func TestWorkspaceGuard_HostilePaths(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.guard(nil)
	ws := f.ws
	type want struct{ read, write adapter.Action }
	ask := want{adapter.Ask, adapter.Ask}
	allow := want{adapter.Allow, adapter.Allow}
	for _, tc := range []struct {
		name, path string
		want       want
		// outside is where the path really leads; it must be among the
		// Decision's paths when the call asks.
		outside string
	}{
		{"../ traversal", "../other/secret", ask, filepath.Join(f.other, "secret")},
		{"../ from a subfolder", "sub/../../other", ask, f.other},
		{"absolute outside", filepath.Join(f.other, "secret"), ask, filepath.Join(f.other, "secret")},
		{"absolute through the workspace and out", ws + "/../other/secret", ask, filepath.Join(f.other, "secret")},
		{"sibling sharing the prefix", ws + "_evil/x", ask, ws + "_evil/x"},
		{"sibling sharing the prefix, itself", ws + "_evil", ask, ws + "_evil"},
		{"sibling with a trailing quote", ws + "'/x", ask, ws + "'/x"},
		{"sibling with a trailing space", ws + " /x", ask, ws + " /x"},
		{"symlink to a file outside", "escfile", ask, filepath.Join(f.other, "secret")},
		{"symlink to a folder outside", "escape/secret", ask, filepath.Join(f.other, "secret")},
		{"symlink chain", "chain1/secret", ask, filepath.Join(f.other, "secret")},
		{"relative .. symlink", "relup/secret", ask, filepath.Join(f.other, "secret")},
		{"symlink climbing out through a subfolder", "selfup/secret", ask, filepath.Join(f.other, "secret")},
		{"dangling symlink outside", "dangle", ask, filepath.Join(f.other, "nope")},
		{"dangling relative symlink", "dangle_rel", ask, filepath.Join(f.root, "nowhere", "x")},
		{"missing parents under a symlinked folder", "escape/new/dir/f.txt", ask, filepath.Join(f.other, "new", "dir", "f.txt")},
		{"symlink loop", "loop/x", ask, ""},
		{"~ leading outside", "~/.ssh/id_rsa", ask, filepath.Join(f.home, ".ssh", "id_rsa")},
		{"symlink into home", "homelink", ask, filepath.Join(f.home, ".ssh", "id_rsa")},
		{"file:// URL", "file://" + filepath.Join(f.other, "secret"), ask, ""},
		{"FILE:// URL", "FILE://" + filepath.Join(f.other, "secret"), ask, ""},
		{"NUL byte", "README.md\x00/../../other/secret", ask, ""},
		// A read asks; a write is refused: no approval opens /proc.
		{"/proc/self/environ", "/proc/self/environ", want{adapter.Ask, adapter.Deny}, ""},
		{"root", "/", ask, "/"},

		{"..test", "..test", allow, ""},
		{"%2e%2e", "%2e%2e", allow, ""},
		{"spaces", "sp ace/f.txt", allow, ""},
		{"quotes", "q'uote", allow, ""},
		{"symlink from inside to inside", "inner/a.go", allow, ""},
		{"W//./x", ws + "//./sub/x", allow, ""},
		{"absolute inside", filepath.Join(ws, "sub", "a.go"), allow, ""},
		{"not created yet", "new/dir/f.txt", allow, ""},
		{"~user is a relative name", "~nobody-such/x", allow, ""},

		{"the workspace itself, relative", ".", want{adapter.Allow, adapter.Ask}, ws},
		{"the workspace itself, absolute", ws, want{adapter.Allow, adapter.Ask}, ws},
		{"the workspace through a symlink", "wsself", want{adapter.Allow, adapter.Ask}, ws},
		{"yagent's project settings", ".yagent/config.yaml", want{adapter.Allow, adapter.Ask}, filepath.Join(ws, ".yagent", "config.yaml")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, mode := range []struct {
				roles map[string]sdk.Role
				want  adapter.Action
			}{{readRoles, tc.want.read}, {writeRoles, tc.want.write}} {
				effect := sdk.EffectRead
				if mode.roles["path"] == sdk.RolePathWrite {
					effect = sdk.EffectWrite
				}
				d := check(g, spec(effect, mode.roles), readArgs(tc.path))
				if d.Action != mode.want {
					t.Fatalf("%s %q: %v (%s), want %v", effect, tc.path, d.Action, d.Reason, mode.want)
				}
				if d.Action == adapter.Ask {
					if d.Reason == "" {
						t.Fatalf("%s %q: an ask must say why", effect, tc.path)
					}
					if tc.outside != "" && !slices.Contains(d.Paths, tc.outside) {
						t.Fatalf("%s %q: Paths %v lack %s, where the path really leads", effect, tc.path, d.Paths, tc.outside)
					}
				}
			}
		})
	}
}

func TestWorkspaceGuard_ReadWhitelist(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	extra := filepath.Join(f.root, "docs")
	mkdir(t, extra)
	// A linked git worktree: the workspace's .git file names a gitdir
	// whose commondir leads to the main checkout's .git.
	main := filepath.Join(f.root, "main")
	gitdir := filepath.Join(main, ".git", "worktrees", "ws")
	mkdir(t, gitdir)
	write(t, filepath.Join(gitdir, "commondir"), "../..\n")
	write(t, filepath.Join(gitdir, "gitdir"), filepath.Join(f.ws, ".git")+"\n")
	write(t, filepath.Join(f.ws, ".git"), "gitdir: "+gitdir+"\n")
	write(t, filepath.Join(main, "go.mod"), "module x\n")

	g := f.guard(func(o *Options) { o.Policy.ReadPaths = []string{extra} })
	sess := session.New("s")
	sess.ApprovePaths(f.other)
	for _, tc := range []struct {
		name, path string
		sess       *session.Session
		want       adapter.Action
	}{
		{"skill folder", filepath.Join(f.skills, "s", "SKILL.md"), nil, adapter.Allow},
		{"skill folder through a symlink", "skilllink/SKILL.md", nil, adapter.Allow},
		{"read_paths", filepath.Join(extra, "a.md"), nil, adapter.Allow},
		{"main checkout of the worktree", filepath.Join(main, "go.mod"), nil, adapter.Allow},
		{"path the session approved", filepath.Join(f.other, "secret"), sess, adapter.Allow},
		{"not approved in another session", filepath.Join(f.other, "secret"), session.New("t"), adapter.Ask},
		{"beside the skill folder", filepath.Join(f.root, "skills2"), nil, adapter.Ask},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := tc.sess
			if s == nil {
				s = session.New("x")
			}
			d := g.Check(t.Context(), adapter.GuardRequest{Spec: spec(sdk.EffectRead, readRoles), Args: readArgs(tc.path), Session: s, Trusted: true})
			if d.Action != tc.want {
				t.Fatalf("read %s: %v (%s), want %v", tc.path, d.Action, d.Reason, tc.want)
			}
			if d.Action == adapter.Allow && len(d.Paths) == 0 {
				t.Fatalf("read %s allowed outside the workspace, but Paths is empty: the plugin could not open it", tc.path)
			}
			if w := g.Check(t.Context(), adapter.GuardRequest{Spec: spec(sdk.EffectWrite, writeRoles), Args: readArgs(tc.path), Session: s, Trusted: true}); w.Action != adapter.Ask {
				t.Fatalf("write %s: %v; the read whitelist does not cover writes", tc.path, w.Action)
			}
		})
	}
}

func TestWithin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		root, p string
		self    bool
		want    bool
	}{
		{"/w", "/w", true, true},
		{"/w", "/w", false, false},
		{"/w", "/w/x", false, true},
		{"/w", "/w_evil", true, false},
		{"/w", "/w_evil/x", true, false},
		{"/w", "/w'/x", true, false},
		{"/w", "/", true, false},
		{"/", "/etc", false, true},
		{"/w/x", "/w", true, false},
	} {
		if got := policy.Within(tc.root, tc.p, tc.self); got != tc.want {
			t.Errorf("policy.Within(%q, %q, %v) = %v, want %v", tc.root, tc.p, tc.self, got, tc.want)
		}
	}
}
