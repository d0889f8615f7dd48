package hostile

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkspaceContentIsData: nothing a repository ships or a model writes
// inside the workspace (or a folder above it) adds a read root: not a .git
// file and its commondir, not a .yagent/skills link, not a SKILL.md link,
// not a go.mod replace. Every case was red on the code before this rule.
func TestWorkspaceContentIsData(t *testing.T) {
	t.Parallel()
	// readOutside reads the outside secret with tool once the workspace
	// holds what setup writes.
	type probe func(e *env) (tool string, args map[string]any, secret string)
	readFile := func(e *env) (string, map[string]any, string) {
		s := e.secret("notes.txt")
		return "read_file", map[string]any{"path": filepath.Join(e.outside, "notes.txt")}, s
	}
	grepOut := func(e *env) (string, map[string]any, string) {
		s := e.secret("notes.txt")
		return "grep", map[string]any{"pattern": "SECRET", "path": e.outside}, s
	}
	readHome := func(e *env) (string, map[string]any, string) {
		s := e.secret(filepath.Join(e.home, ".ssh", "id_rsa"))
		return "read_file", map[string]any{"path": "~/.ssh/id_rsa"}, s
	}
	// gitFile writes ws/.git naming gitdir and gitdir's commondir.
	gitFile := func(gitdir, commondir string) func(e *env) {
		return func(e *env) {
			e.write(".git", "gitdir: "+gitdir+"\n")
			gd := gitdir
			if !filepath.IsAbs(gd) {
				gd = e.ws(gd)
			}
			e.write(filepath.Join(gd, "commondir"), commondir+"\n")
		}
	}
	cases := []struct {
		name  string
		setup func(e *env)
		probe probe
	}{
		{".git file, commondir /.git: read outside", gitFile("gd", "/.git"), readFile},
		{".git file, commondir /.git: grep outside", gitFile("gd", "/.git"), grepOut},
		{".git file above the workspace", func(e *env) {
			e.write(filepath.Join(e.root, ".git"), "gitdir: gd\n")
			e.write(filepath.Join(e.root, "gd", "commondir"), "/.git\n")
		}, readFile},
		{"gitdir to a fake repository whose commondir is $HOME", func(e *env) {
			gitFile("fake", filepath.Join(e.home, ".git"))(e)
		}, readHome},
		{"commondir climbing out relatively to an outside .git", func(e *env) {
			gitFile("g/h", "../../../outside/.git")(e)
		}, readFile},
		{"commondir naming an outside .git absolutely", func(e *env) {
			gitFile("gd", filepath.Join(e.outside, ".git"))(e)
		}, readFile},
		{"gitdir into a real repository's entry for another worktree", func(e *env) {
			// outside/repo is a main checkout with a linked worktree at
			// root/other; the workspace claims that worktree's gitdir.
			gd := filepath.Join(e.outside, "repo", ".git", "worktrees", "other")
			e.write(filepath.Join(gd, "commondir"), "../..\n")
			e.write(filepath.Join(gd, "gitdir"), filepath.Join(e.root, "other", ".git")+"\n")
			e.write(filepath.Join(e.root, "other", ".git"), "gitdir: "+gd+"\n")
			e.write(".git", "gitdir: "+gd+"\n")
		}, func(e *env) (string, map[string]any, string) {
			s := e.secret(filepath.Join("repo", "config.txt"))
			return "read_file", map[string]any{"path": filepath.Join(e.outside, "repo", "config.txt")}, s
		}},
		{".yagent/skills symlink to an outside folder: read", func(e *env) {
			e.symlink(e.outside, ".yagent/skills")
		}, readFile},
		{".yagent/skills symlink to an outside folder: grep", func(e *env) {
			e.symlink(e.outside, ".yagent/skills")
		}, grepOut},
		{".yagent/skills symlink to the home folder", func(e *env) {
			e.symlink(e.home, ".yagent/skills")
		}, readHome},
		{"SKILL.md symlink to an outside file", func(e *env) {
			e.symlink(filepath.Join(e.outside, "notes.txt"), ".yagent/skills/evil/SKILL.md")
		}, func(e *env) (string, map[string]any, string) {
			return "use_skill", map[string]any{"name": "evil"}, e.secret("notes.txt")
		}},
		{"skill folder symlink to an outside folder", func(e *env) {
			e.symlink(filepath.Join(e.outside, "skill"), ".yagent/skills/evil")
		}, func(e *env) (string, map[string]any, string) {
			return "use_skill", map[string]any{"name": "evil"}, e.secret(filepath.Join("skill", "SKILL.md"))
		}},
		{".yagent/skills symlink out: use_skill reads the outside skills", func(e *env) {
			e.symlink(e.outside, ".yagent/skills")
		}, func(e *env) (string, map[string]any, string) {
			return "use_skill", map[string]any{"name": "evil"}, e.secret(filepath.Join("evil", "SKILL.md"))
		}},
		{"go.mod replace to an outside folder: find_references", func(e *env) {
			contentGoReplace(e, "../outside/o")
		}, contentFindToken},
		{"go.mod replace to an absolute outside folder: find_references", func(e *env) {
			contentGoReplace(e, filepath.Join(e.outside, "o"))
		}, contentFindToken},
		{"go.mod above the workspace: find_references", func(e *env) {
			e.write(filepath.Join(e.root, "go.mod"), "module example.com/r\n\ngo 1.21\n")
			e.write("main.go", "package main\n\nimport \"example.com/r/outside\"\n\nfunc main() { println(outside.Token) }\n")
		}, func(e *env) (string, map[string]any, string) {
			e.write(filepath.Join(e.outside, "o.go"), "package outside\n\n// Token is outside.\nconst Token = \"outside\"\n")
			return "find_references", map[string]any{"name": "Token"}, filepath.Join(e.outside, "o.go")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			tool, args, secret := tc.probe(e)
			tc.setup(e)
			r := e.serve().call(t, tool, args)
			if tool == "read_file" || tool == "grep" {
				// An outside read with no root to allow it asks.
				blocked(t, r, secret)
				return
			}
			leaked(t, r, secret)
		})
	}

	// The model writes the two files with no ask; the next session must
	// not read outside for it.
	t.Run("model writes .git and commondir, the next session reads outside", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		secret := e.secret("notes.txt")
		c := e.serve()
		for path, content := range map[string]string{".git": "gitdir: gd\n", "gd/commondir": "/.git\n"} {
			allowed(t, c.call(t, "write_file", map[string]any{"path": path, "content": content}))
		}
		blocked(t, e.serve().call(t, "read_file", map[string]any{"path": filepath.Join(e.outside, "notes.txt")}), secret)
	})
	t.Run("a dropped skill link is named at start-up", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.symlink(e.outside, ".yagent/skills")
		out, _ := e.cli("", "tools")
		if !strings.Contains(out, filepath.Join(e.workspace, ".yagent", "skills")) {
			t.Errorf("yagent tools does not name the dropped skill folder:\n%s", out)
		}
	})
}

// contentGoReplace makes the workspace a Go module whose go.mod replaces
// example.com/o with dir, an outside module defining Token.
func contentGoReplace(e *env, dir string) {
	e.write("go.mod", "module example.com/ws\n\ngo 1.21\n\nrequire example.com/o v0.0.0\n\nreplace example.com/o => "+dir+"\n")
	e.write("main.go", "package main\n\nimport \"example.com/o\"\n\nfunc main() { println(o.Token) }\n")
}

// contentFindToken writes the outside module defining Token and asks for
// the uses of Token: the outside file loaded shows as its definition.
func contentFindToken(e *env) (string, map[string]any, string) {
	e.write(filepath.Join(e.outside, "o", "go.mod"), "module example.com/o\n\ngo 1.21\n")
	e.write(filepath.Join(e.outside, "o", "o.go"), "package o\n\n// Token is outside.\nconst Token = \"outside\"\n")
	return "find_references", map[string]any{"name": "Token"}, filepath.Join(e.outside, "o", "o.go")
}
