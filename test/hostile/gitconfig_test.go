package hostile

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// gitInit makes e's workspace a git repository with one commit of a.txt,
// isolated from the host's git config.
func gitInit(t *testing.T, e *env) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	e.write("a.txt", "one\n")
	for _, args := range [][]string{
		{"init", "-q"}, {"add", "a.txt"},
		{"-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "one"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = e.workspace
		cmd.Env = append(e.environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// TestWorkspaceContentIsData_GitConfig: under the user's ask rule on git,
// with nobody to answer, a read-only git command asks when the repository
// (its config, what it includes, its gitdir) would make git run a program:
// the read-only classifier must not turn the ask into allow.
func TestWorkspaceContentIsData_GitConfig(t *testing.T) {
	t.Parallel()
	leak := "sh -c 'cat " + "$SECRET_FILE" + "'"
	cases := []struct {
		name  string
		files map[string]string // workspace files; .git/config is appended to
		cmd   string
		mode  string
		dirty bool // a.txt changed after the commit
	}{
		{name: "diff.external", files: map[string]string{".git/config": "[diff]\n\texternal = " + leak + "\n"}, cmd: "git diff", dirty: true},
		{name: "core.pager", files: map[string]string{".git/config": "[core]\n\tpager = " + leak + "\n"}, cmd: "git log", mode: "pty"},
		{name: "pager.log", files: map[string]string{".git/config": "[pager]\n\tlog = " + leak + "\n"}, cmd: "git log", mode: "pty"},
		{name: "alias", files: map[string]string{".git/config": "[alias]\n\tx = !" + leak + "\n"}, cmd: "git status"},
		{name: "fsmonitor by include.path", files: map[string]string{".git/config": "[include]\n\tpath = ../inc.cfg\n", "inc.cfg": "[core]\n\tfsmonitor = ./mon.sh\n"}, cmd: "git status"},
		{name: "fsmonitor by includeIf", files: map[string]string{".git/config": "[includeIf \"gitdir:/\"]\n\tpath = ../inc.cfg\n", "inc.cfg": "[core]\n\tfsmonitor = ./mon.sh\n"}, cmd: "git status"},
		{name: "fsmonitor, case folded", files: map[string]string{".git/config": "[CORE]\n\tFsMonitor = ./mon.sh\n"}, cmd: "git status"},
		{name: "textconv", files: map[string]string{".git/config": "[diff \"leak\"]\n\ttextconv = " + leak + "\n", ".gitattributes": "*.txt diff=leak\n"}, cmd: "git log -p"},
		{name: "filter", files: map[string]string{".git/config": "[filter \"leak\"]\n\tclean = " + leak + "\n", ".gitattributes": "*.txt filter=leak\n"}, cmd: "git status", dirty: true},
		{name: "gpg.program", files: map[string]string{".git/config": "[log]\n\tshowSignature = true\n[gpg]\n\tprogram = ./mon.sh\n"}, cmd: "git log"},
		{name: "worktree config", files: map[string]string{".git/config": "[extensions]\n\tworktreeConfig = true\n", ".git/config.worktree": "[core]\n\tfsmonitor = ./mon.sh\n"}, cmd: "git status"},
		{name: "GIT_EXTERNAL_DIFF", cmd: "GIT_EXTERNAL_DIFF=./mon.sh git diff", dirty: true},
		{name: "GIT_PAGER", cmd: "GIT_PAGER=./mon.sh git log", mode: "pty"},
		{name: "submodule config", files: map[string]string{".git/modules/lib/HEAD": "ref: refs/heads/main\n", ".git/modules/lib/config": "[core]\n\tfsmonitor = ./mon.sh\n"}, cmd: "git status"},
		{name: "gitdir file", files: map[string]string{"sub/.git": "gitdir: ../gd\n", "gd/HEAD": "ref: refs/heads/main\n", "gd/config": "[core]\n\tfsmonitor = ./mon.sh\n"}, cmd: "cd sub && git status"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			marker := e.secret("secret")
			e.extraEnv = []string{"SECRET_FILE=" + filepath.Join(e.outside, "secret")}
			gitInit(t, e)
			e.write("mon.sh", "#!/bin/sh\ncat \"$SECRET_FILE\" >&2\nexit 1\n")
			if out, err := exec.Command("chmod", "+x", e.ws("mon.sh")).CombinedOutput(); err != nil {
				t.Fatalf("chmod: %v %s", err, out)
			}
			if tc.dirty {
				e.write("a.txt", "two\n")
			}
			for p, content := range tc.files {
				if p == ".git/config" {
					content = gitReadFile(t, e.ws(p)) + content
				}
				e.write(p, content)
			}
			execConfig(e, "{action: ask, program: git}")
			c := e.serve()
			args := map[string]any{"command": tc.cmd, "timeout_ms": 10000, "yield_time_ms": 5000}
			if tc.mode != "" {
				args["mode"] = tc.mode
			}
			blocked(t, c.call(t, "run_bash", args), marker)
		})
	}
}

func gitReadFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
