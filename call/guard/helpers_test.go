package guard

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// fixture is a workspace with hostile neighbours:
//
//	root/ws            the workspace: sub/, README.md, benign odd names,
//	                   symlinks inside→inside and inside→outside
//	root/ws_evil       a sibling sharing the workspace's prefix
//	root/ws'  root/ws  siblings named with a trailing quote and space
//	root/other/secret  outside
//	root/home          the user's home, with .ssh/id_rsa
//	root/skills        a configured skill folder
type fixture struct {
	root, ws, other, home, skills string
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	f := fixture{
		root:   root,
		ws:     filepath.Join(root, "ws"),
		other:  filepath.Join(root, "other"),
		home:   filepath.Join(root, "home"),
		skills: filepath.Join(root, "skills"),
	}
	for _, d := range []string{
		f.ws, filepath.Join(f.ws, "sub"), filepath.Join(f.ws, "sp ace"), f.other,
		filepath.Join(f.home, ".ssh"), filepath.Join(f.skills, "s"),
		f.ws + "_evil", f.ws + "'", f.ws + " ",
	} {
		mkdir(t, d)
	}
	for _, p := range []string{
		filepath.Join(f.ws, "README.md"), filepath.Join(f.ws, "sub", "a.go"), filepath.Join(f.ws, "..test"),
		filepath.Join(f.ws, "%2e%2e"), filepath.Join(f.ws, "q'uote"), filepath.Join(f.other, "secret"),
		filepath.Join(f.home, ".ssh", "id_rsa"), filepath.Join(f.skills, "s", "SKILL.md"),
		filepath.Join(f.ws+"_evil", "x"), filepath.Join(f.ws+"'", "x"), filepath.Join(f.ws+" ", "x"),
	} {
		write(t, p, "x")
	}
	for link, target := range map[string]string{
		"inner":      filepath.Join(f.ws, "sub"),                // inside → inside
		"escape":     f.other,                                   // folder outside
		"escfile":    filepath.Join(f.other, "secret"),          // file outside
		"chain1":     filepath.Join(f.ws, "chain2"),             // chain →
		"chain2":     f.other,                                   //   → outside
		"relup":      "../other",                                // relative ..
		"dangle":     filepath.Join(f.other, "nope"),            // dangling, outside
		"dangle_rel": "../nowhere/x",                            // dangling, relative
		"loop":       "loop",                                    // a loop
		"homelink":   filepath.Join(f.home, ".ssh", "id_rsa"),   // into home
		"wsself":     f.ws,                                      // the workspace itself
		"skilllink":  filepath.Join(f.skills, "s"),              // into a skill folder
		"selfup":     filepath.Join("sub", "..", "..", "other"), // relative, climbing out
	} {
		if err := os.Symlink(target, filepath.Join(f.ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func mkdir(t testing.TB, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t testing.TB, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f fixture) guard(mut func(*Options)) *WorkspaceGuard {
	o := Options{Workspace: f.ws, Home: f.home, Policy: &policy.Rules{SkillDirs: []string{f.skills}}}
	if mut != nil {
		mut(&o)
	}
	g := New(o)
	// The fixture plays the rest of the machine, but t.TempDir() lives
	// under /tmp, a safe system path: take out the safe folders holding it.
	g.safe.dirs = slices.DeleteFunc(g.safe.dirs, func(d string) bool { return policy.Within(d, f.root, true) })
	return g
}

var (
	readRoles  = map[string]sdk.Role{"path": sdk.RolePathRead}
	writeRoles = map[string]sdk.Role{"path": sdk.RolePathWrite}
	execRoles  = map[string]sdk.Role{"command": sdk.RoleCommand, "danger": sdk.RoleDangerFlag}
)

func spec(effect sdk.Effect, roles map[string]sdk.Role) sdk.Spec {
	return sdk.Spec{Name: "t", Effect: effect, Roles: roles}
}

func check(g *WorkspaceGuard, sp sdk.Spec, args map[string]any) adapter.Decision {
	return g.Check(context.Background(), adapter.GuardRequest{Spec: sp, Args: args, Session: session.New("s"), Trusted: true})
}

func readArgs(p string) map[string]any { return map[string]any{"path": p} }
func cmdArgs(c string) map[string]any  { return map[string]any{"command": c} }
