package guard

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/policy"
)

// TestReadOnly_GitConfig: the classifier turns an ask rule on git into
// allow only when the repository's config makes git run no program.
func TestReadOnly_GitConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files map[string]string // relative to the workspace
		cmd   string
		want  adapter.Action
	}{
		{name: "clean", files: map[string]string{".git/config": "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = x\n"}, want: adapter.Allow},
		{name: "no repository", want: adapter.Allow},
		{name: "diff.external", files: map[string]string{".git/config": "[diff]\n\texternal = ./x.sh\n"}, want: adapter.Ask},
		{name: "core.pager", files: map[string]string{".git/config": "[core]\n\tpager = sh -c x\n"}, want: adapter.Ask},
		{name: "key case folded", files: map[string]string{".git/config": "[CORE]\n\tPaGeR = x\n"}, want: adapter.Ask},
		{name: "key on the header line", files: map[string]string{".git/config": "[core] fsmonitor = ./x\n"}, want: adapter.Ask},
		{name: "old subsection syntax", files: map[string]string{".git/config": "[diff.foo]\ntextconv = x\n"}, want: adapter.Ask},
		{name: "textconv", files: map[string]string{".git/config": "[diff \"bin\"]\n\ttextconv = ./x\n"}, want: adapter.Ask},
		{name: "alias", files: map[string]string{".git/config": "[alias]\n\tx = !sh\n"}, want: adapter.Ask},
		{name: "filter", files: map[string]string{".git/config": "[filter \"lfs\"]\n\tclean = x\n"}, want: adapter.Ask},
		{name: "pager.log", files: map[string]string{".git/config": "[pager]\n\tlog = x\n"}, want: adapter.Ask},
		{name: "credential helper", files: map[string]string{".git/config": "[credential \"https://x\"]\n\thelper = x\n"}, want: adapter.Ask},
		{name: "gpg program", files: map[string]string{".git/config": "[gpg \"ssh\"]\n\tprogram = x\n"}, want: adapter.Ask},
		{name: "hooksPath", files: map[string]string{".git/config": "[core]\nhooksPath = h\n"}, want: adapter.Ask},
		{name: "sshCommand", files: map[string]string{".git/config": "[core]\nsshCommand = x\n"}, want: adapter.Ask},
		{name: "editor", files: map[string]string{".git/config": "[core]\neditor = x\n"}, want: adapter.Ask},
		{name: "continued line hides nothing", files: map[string]string{".git/config": "[core]\n\tbare = \\\nfalse\n[core]\n\tpager = x\n"}, want: adapter.Ask},
		{name: "include.path", files: map[string]string{".git/config": "[include]\n\tpath = ../inc.cfg\n", "inc.cfg": "[core]\n\tfsmonitor = ./x\n"}, want: adapter.Ask},
		{name: "includeIf followed whatever its condition", files: map[string]string{".git/config": "[includeIf \"gitdir:/nowhere/\"]\n\tpath = inc.cfg\n", ".git/inc.cfg": "[diff]\nexternal = x\n"}, want: adapter.Ask},
		{name: "nested include", files: map[string]string{".git/config": "[include]\npath = a\n", ".git/a": "[include]\npath = b\n", ".git/b": "[alias]\nx = y\n"}, want: adapter.Ask},
		{name: "include from the home of a user the guard cannot find", files: map[string]string{".git/config": "[include]\n\tpath = ~nosuchuser-yagent/inc.cfg\n"}, want: adapter.Ask},
		{name: "include loop", files: map[string]string{".git/config": "[include]\npath = config\n"}, want: adapter.Ask},
		{name: "worktree config", files: map[string]string{".git/config": "[extensions]\nworktreeConfig = true\n", ".git/config.worktree": "[core]\npager = x\n"}, want: adapter.Ask},
		{name: "gitdir file", files: map[string]string{".git": "gitdir: gd\n", "gd/HEAD": "ref: refs/heads/main\n", "gd/config": "[core]\npager = x\n"}, want: adapter.Ask},
		{name: "gitdir file, commondir", files: map[string]string{".git": "gitdir: gd\n", "gd/commondir": "../common\n", "common/config": "[diff]\nexternal = x\n"}, want: adapter.Ask},
		{name: "not a gitdir file", files: map[string]string{".git": "nonsense\n"}, want: adapter.Ask},
		{name: "bare repository", files: map[string]string{"HEAD": "ref: refs/heads/main\n", "objects/.keep": "", "refs/.keep": "", "config": "[core]\npager = x\n"}, want: adapter.Ask},
		{name: "unparsable config", files: map[string]string{".git/config": "[core\npager = x\n"}, want: adapter.Ask},
		{name: "hook", files: map[string]string{".git/config": "", ".git/hooks/post-index-change": "#!/bin/sh\n"}, want: adapter.Ask},
		{name: "sample hook", files: map[string]string{".git/config": "", ".git/hooks/pre-commit.sample": "#!/bin/sh\n"}, want: adapter.Allow},
		{name: "GIT_ variable", files: map[string]string{".git/config": ""}, cmd: "GIT_PAGER=x git log", want: adapter.Ask},
		{name: "GIT_ variable alone", files: map[string]string{".git/config": ""}, cmd: "GIT_EXTERNAL_DIFF=x; git diff", want: adapter.Ask},
		{name: "PAGER variable", files: map[string]string{".git/config": ""}, cmd: "PAGER=x git log", want: adapter.Ask},
		{name: "submodule config under .git/modules", files: map[string]string{".git/config": "", ".git/modules/lib/HEAD": "ref: x\n", ".git/modules/lib/config": "[core]\nfsmonitor = x\n"}, want: adapter.Ask},
		{name: "submodule named with a slash", files: map[string]string{".git/config": "", ".git/modules/a/b/HEAD": "ref: x\n", ".git/modules/a/b/config": "[core]\npager = x\n"}, want: adapter.Ask},
		{name: "submodule with its own .git", files: map[string]string{".git/config": "", ".gitmodules": "[submodule \"lib\"]\n\tpath = lib\n", "lib/.git/config": "[diff]\nexternal = x\n"}, want: adapter.Ask},
		{name: "clean submodule", files: map[string]string{".git/config": "", ".gitmodules": "[submodule \"lib\"]\n\tpath = lib\n", "lib/.git/config": "[core]\nbare = false\n", ".git/modules/lib/HEAD": "ref: x\n", ".git/modules/lib/config": ""}, want: adapter.Allow},
		{name: "config of a folder cd moves to", files: map[string]string{"sub/.git/config": "[core]\npager = x\n"}, cmd: "cd sub && git log", want: adapter.Ask},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			for p, c := range tc.files {
				mkdir(t, filepath.Dir(filepath.Join(f.ws, p)))
				write(t, filepath.Join(f.ws, p), c)
			}
			g := f.guard(func(o *Options) {
				o.Policy = rulesProfile(policy.ExecRule{Action: policy.ExecAsk, Program: "git"})
			})
			cmd := tc.cmd
			if cmd == "" {
				cmd = "git status && git log --oneline"
			}
			if d := check(g, execTool, cmdArgs(cmd)); d.Action != tc.want {
				t.Fatalf("Check(%q) = %v (%s), want %v", cmd, d.Action, d.Reason, tc.want)
			}
		})
	}
}

// TestReadOnly_GitConfigOfRealRepo: a repository git init made is clean.
func TestReadOnly_GitConfigOfRealRepo(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	cmd := exec.Command("git", "init", "-q", dir)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if why := gitRunsProgram(dir, ""); why != "" {
		t.Fatalf("gitRunsProgram(git init) = %q, want none", why)
	}
}

func TestParseGitConfig(t *testing.T) {
	t.Parallel()
	src := "# c\n[core]\n\tbare = false ; c\n[remote \"or\\\"ig\"]\n\turl = \"a b\" # c\n\tflag\n[Diff.X]\nTextConv = y\\\nz\n"
	got, err := parseGitConfig(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []gitEntry{
		{"core", "", "bare", "false"},
		{"remote", "or\"ig", "url", "a b"},
		{"remote", "or\"ig", "flag", ""},
		{"diff", "x", "textconv", "yz"},
	}
	if len(got) != len(want) {
		t.Fatalf("parseGitConfig = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{"[core\n", "key = x\n", "[core]\nx = \"open\n", "[core]\n!x\n"} {
		if _, err := parseGitConfig(bad); err == nil {
			t.Errorf("parseGitConfig(%q) = nil error, want one", bad)
		}
	}
}

// TestReadOnly_NeverMakeOrNpm: make and npm run what the workspace's
// Makefile and package.json say, so they are never read-only.
func TestReadOnly_NeverMakeOrNpm(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"make", "make -n", "make --dry-run", "npm test", "npm run build", "npm ls", "yarn test", "pnpm run x", "go generate ./...", "cargo build"} {
		if analyzeCommand(cmd, "/w", "/home/u", nil).readOnly {
			t.Errorf("readOnly(%q) = true, want false", cmd)
		}
	}
}
