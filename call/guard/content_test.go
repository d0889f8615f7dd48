package guard

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// TestWorktreeMain: a main checkout is trusted only when it points back at
// the workspace's .git file; what the workspace (or a folder above it)
// holds can never make /, the home folder or a fake repository a root.
func TestWorktreeMain(t *testing.T) {
	t.Parallel()
	type layout struct{ root, ws, home, main string }
	// linked writes what `git worktree add` leaves: main/.git/worktrees/wt
	// with commondir and the gitdir pointing back, and ws/.git.
	linked := func(t *testing.T, l layout) {
		gd := filepath.Join(l.main, ".git", "worktrees", "wt")
		mkdir(t, gd)
		write(t, filepath.Join(gd, "commondir"), "../..\n")
		write(t, filepath.Join(gd, "gitdir"), filepath.Join(l.ws, ".git")+"\n")
		write(t, filepath.Join(l.ws, ".git"), "gitdir: "+gd+"\n")
	}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, l layout)
		want  func(l layout) string
	}{
		{"real worktree", linked, func(l layout) string { return l.main }},
		{"relative gitdir and back-pointer", func(t *testing.T, l layout) {
			gd := filepath.Join(l.main, ".git", "worktrees", "wt")
			mkdir(t, gd)
			write(t, filepath.Join(gd, "commondir"), "../..\n")
			write(t, filepath.Join(gd, "gitdir"), "../../../../ws/.git\n")
			write(t, filepath.Join(l.ws, ".git"), "gitdir: ../main/.git/worktrees/wt\n")
		}, func(l layout) string { return l.main }},
		{"no back-pointer", func(t *testing.T, l layout) {
			linked(t, l)
			os.Remove(filepath.Join(l.main, ".git", "worktrees", "wt", "gitdir"))
		}, nil},
		{"back-pointer to another worktree", func(t *testing.T, l layout) {
			linked(t, l)
			write(t, filepath.Join(l.main, ".git", "worktrees", "wt", "gitdir"), filepath.Join(l.root, "other", ".git")+"\n")
		}, nil},
		{"commondir /.git written in the workspace", func(t *testing.T, l layout) {
			mkdir(t, filepath.Join(l.ws, "gd"))
			write(t, filepath.Join(l.ws, "gd", "commondir"), "/.git\n")
			write(t, filepath.Join(l.ws, "gd", "gitdir"), filepath.Join(l.ws, ".git")+"\n")
			write(t, filepath.Join(l.ws, ".git"), "gitdir: gd\n")
		}, nil},
		{"gitdir outside the common folder's worktrees", func(t *testing.T, l layout) {
			mkdir(t, filepath.Join(l.main, ".git"))
			mkdir(t, filepath.Join(l.ws, "gd"))
			write(t, filepath.Join(l.ws, "gd", "commondir"), filepath.Join(l.main, ".git")+"\n")
			write(t, filepath.Join(l.ws, "gd", "gitdir"), filepath.Join(l.ws, ".git")+"\n")
			write(t, filepath.Join(l.ws, ".git"), "gitdir: gd\n")
		}, nil},
		{"fake repository in the workspace whose commondir is the home", func(t *testing.T, l layout) {
			gd := filepath.Join(l.home, ".git", "worktrees", "wt")
			mkdir(t, gd)
			write(t, filepath.Join(gd, "commondir"), "../..\n")
			write(t, filepath.Join(gd, "gitdir"), filepath.Join(l.ws, ".git")+"\n")
			write(t, filepath.Join(l.ws, ".git"), "gitdir: "+gd+"\n")
		}, nil},
		{".git file above the workspace, no back-pointer", func(t *testing.T, l layout) {
			mkdir(t, filepath.Join(l.root, "gd"))
			mkdir(t, filepath.Join(l.main, ".git"))
			write(t, filepath.Join(l.root, "gd", "commondir"), filepath.Join(l.main, ".git")+"\n")
			write(t, filepath.Join(l.root, ".git"), "gitdir: gd\n")
		}, nil},
		{"a main checkout itself", func(t *testing.T, l layout) { mkdir(t, filepath.Join(l.ws, ".git")) }, nil},
		{"bare common folder", func(t *testing.T, l layout) {
			gd := filepath.Join(l.root, "bare.git", "worktrees", "wt")
			mkdir(t, gd)
			write(t, filepath.Join(gd, "commondir"), "../..\n")
			write(t, filepath.Join(gd, "gitdir"), filepath.Join(l.ws, ".git")+"\n")
			write(t, filepath.Join(l.ws, ".git"), "gitdir: "+gd+"\n")
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			if r, err := filepath.EvalSymlinks(root); err == nil {
				root = r
			}
			l := layout{root: root, ws: filepath.Join(root, "ws"), home: filepath.Join(root, "home"), main: filepath.Join(root, "main")}
			mkdir(t, l.ws)
			mkdir(t, l.home)
			tc.setup(t, l)
			want := ""
			if tc.want != nil {
				want = tc.want(l)
			}
			if got := worktreeMain(l.ws, l.home); got != want {
				t.Errorf("worktreeMain = %q, want %q", got, want)
			}
		})
	}
}

func TestMayBeMain(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "home")
	for main, want := range map[string]bool{
		"/":                             false,
		home:                            false,
		filepath.Dir(home):              false,
		filepath.Join(home, "src", "m"): true,
		"/srv/repo":                     true,
	} {
		if got := mayBeMain(main, home); got != want {
			t.Errorf("mayBeMain(%q, %q) = %v, want %v", main, home, got, want)
		}
	}
	if mayBeMain("/", "") {
		t.Errorf("mayBeMain(/, no home) = true, want / refused whatever the home")
	}
}

// TestReadRoots_WorkspaceLinksDropped: a configured folder named inside the
// workspace that leads outside it is dropped and named; outside folders and
// folders that stay inside are kept.
func TestReadRoots_WorkspaceLinksDropped(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	mkdir(t, filepath.Join(f.ws, ".yagent"))
	if err := os.Symlink(f.other, filepath.Join(f.ws, ".yagent", "skills")); err != nil {
		t.Fatal(err)
	}
	mkdir(t, filepath.Join(f.ws, "docs"))
	prof := &policy.Rules{
		SkillDirs: []string{filepath.Join(f.ws, ".yagent", "skills"), f.skills},
		ReadPaths: []string{"escape", "docs"},
	}
	roots, warnings := readRoots(f.ws, f.home, prof)
	if slices.Contains(roots, f.other) {
		t.Errorf("readRoots = %v: holds %s, reached through a symlink in the workspace", roots, f.other)
	}
	if !slices.Contains(roots, f.skills) || !slices.Contains(roots, filepath.Join(f.ws, "docs")) {
		t.Errorf("readRoots = %v, want %s and the workspace's docs kept", roots, f.skills)
	}
	joined := strings.Join(warnings, "\n")
	for _, want := range []string{filepath.Join(f.ws, ".yagent", "skills"), filepath.Join(f.ws, "escape"), "skill_dirs", "read_paths"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings %q do not name %s", warnings, want)
		}
	}
	g := f.guard(func(o *Options) { o.Policy = prof })
	if d := check(g, spec(sdk.EffectRead, readRoles), readArgs(filepath.Join(f.other, "secret"))); d.Action != adapter.Ask {
		t.Errorf("read through the dropped root: %v, want ask", d.Action)
	}
	if len(g.Warnings()) != len(warnings) {
		t.Errorf("Warnings() = %q, want %q", g.Warnings(), warnings)
	}
}
