package guard

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/internal/filestat"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

func execGuard(t *testing.T, rules ...policy.ExecRule) *WorkspaceGuard {
	t.Helper()
	return New(Options{Workspace: t.TempDir(), Home: t.TempDir(), Policy: &policy.Rules{Exec: policy.ExecRules{Rules: rules}}})
}

func need(t *testing.T, files ...string) {
	t.Helper()
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("%s is missing here: %v", f, err)
		}
	}
}

// TestJudgeExec: an exec seen at run time gets the verdict the guard
// gives the same command written out: by name, by file, by copy; an
// interactive rule only when stdin is a terminal; the strictest rule when
// the program is unknown.
func TestJudgeExec(t *testing.T) {
	t.Parallel()
	need(t, "/usr/bin/printenv", "/usr/bin/python3", "/usr/bin/env")
	denyPrintenv := policy.ExecRule{Action: policy.ExecDeny, Program: "printenv"}
	askEnv := policy.ExecRule{Action: policy.ExecAsk, Program: "env", Args: []string{"-i"}}
	askPy := policy.ExecRule{Action: policy.ExecAsk, Program: "python3", Interactive: true}
	g := execGuard(t, denyPrintenv, askEnv, askPy, policy.ExecRule{Action: policy.ExecAllow, Program: "ls"})

	copyDir := t.TempDir()
	copied := filepath.Join(copyDir, "innocent")
	b, err := os.ReadFile("/usr/bin/printenv")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copied, b, 0o755); err != nil {
		t.Fatal(err)
	}
	modified := filepath.Join(copyDir, "modified")
	if err := os.WriteFile(modified, append(b, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(copyDir, "s.py")
	if err := os.WriteFile(script, []byte("#!/usr/bin/python3\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name         string
		program      string
		argv, interp []string
		terminal     bool
		want, rule   string
	}{
		{"deny by name", "/usr/bin/printenv", []string{"printenv", "FOO"}, nil, false, policy.ExecDeny, ruleText(denyPrintenv)},
		{"deny by argv0 alone", "/opt/other/tool", []string{"printenv"}, nil, false, policy.ExecDeny, ruleText(denyPrintenv)},
		{"deny a byte-identical copy", copied, []string{"innocent", "HOME"}, nil, false, policy.ExecDeny, ruleText(denyPrintenv)},
		{"a modified copy is another program", modified, []string{"modified"}, nil, false, policy.ExecAllow, ""},
		{"ask by args", "/usr/bin/env", []string{"env", "-i", "sh"}, nil, false, policy.ExecAsk, ruleText(askEnv)},
		{"args not held allow", "/usr/bin/env", []string{"env", "FOO=1", "sh"}, nil, false, policy.ExecAllow, ""},
		{"interactive at a terminal asks", "/usr/bin/python3", []string{"python3"}, nil, true, policy.ExecAsk, ruleText(askPy)},
		{"interactive with stdin fed allows", "/usr/bin/python3", []string{"python3"}, nil, false, policy.ExecAllow, ""},
		{"a script run is not interactive", "/usr/bin/python3", []string{"python3", "s.py"}, nil, true, policy.ExecAllow, ""},
		{"interpreter of a script by name", script, []string{"./s.py"}, []string{"/usr/bin/python3"}, true, policy.ExecAsk, ruleText(askPy)},
		{"no rule allows", "/usr/bin/true", []string{"true"}, nil, true, policy.ExecAllow, ""},
		{"unidentified gets the deny", "", []string{"x"}, nil, false, policy.ExecDeny, ruleText(denyPrintenv)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			action, rule := g.JudgeExec(tt.program, tt.argv, tt.interp, tt.terminal)
			if action != tt.want || rule != tt.rule {
				t.Errorf("JudgeExec(%q, %q, %q, %v) = %s %s, want %s %s", tt.program, tt.argv, tt.interp, tt.terminal, action, rule, tt.want, tt.rule)
			}
		})
	}
}

// TestJudgeExec_UnidentifiedStrictest: with no deny rule an unknown
// program gets the ask; with neither, it runs.
func TestJudgeExec_UnidentifiedStrictest(t *testing.T) {
	t.Parallel()
	ask := policy.ExecRule{Action: policy.ExecAsk, Program: "curl"}
	if a, r := execGuard(t, ask, policy.ExecRule{Action: policy.ExecAllow, Program: "ls"}).JudgeExec("", nil, nil, false); a != policy.ExecAsk || r != ruleText(ask) {
		t.Errorf("JudgeExec(unidentified) with an ask rule = %s %s, want ask %s", a, r, ruleText(ask))
	}
	if a, _ := execGuard(t, policy.ExecRule{Action: policy.ExecAllow, Program: "ls"}).JudgeExec("", nil, nil, false); a != policy.ExecAllow {
		t.Errorf("JudgeExec(unidentified) with only allow rules = %s, want allow", a)
	}
}

// TestExecPrograms_HashedOnce: a rule program's files carry their sizes
// and hashes, read once across calls.
func TestExecPrograms_HashedOnce(t *testing.T) {
	t.Parallel()
	need(t, "/usr/bin/printenv")
	g := execGuard(t, policy.ExecRule{Action: policy.ExecDeny, Program: "printenv"}, policy.ExecRule{Action: policy.ExecAllow, Program: "ls"},
		policy.ExecRule{Action: policy.ExecAsk, Program: "printenv", Args: []string{"HOME"}})
	progs := g.ExecPrograms()
	if len(progs) != 1 || progs[0].Name != "printenv" || len(progs[0].Files) == 0 {
		t.Fatalf("ExecPrograms() = %+v, want printenv alone, with its files", progs)
	}
	i := slices.IndexFunc(progs[0].Files, func(f sdk.ProgramFile) bool { return f.Path == "/usr/bin/printenv" })
	fi, _ := os.Stat("/usr/bin/printenv")
	if i < 0 || progs[0].Files[i].Size != fi.Size() || len(progs[0].Files[i].SHA256) != 64 {
		t.Fatalf("files %+v, want /usr/bin/printenv with its size and a sha256", progs[0].Files)
	}
	n := g.hashes.Hashed()
	g.progs.built = false // as when a folder changed: the list is rebuilt, the sums kept
	g.ExecPrograms()
	if g.hashes.Hashed() != n {
		t.Errorf("a second ExecPrograms hashed %d more files, want none", g.hashes.Hashed()-n)
	}
}

// TestSandbox_PathsByApproval: an approved ask grants the paths the call
// writes to writes and the others to reads; paths the guard let through
// without asking widen Read only; the session's approvals and the
// profile's sandbox paths always apply, Write being the admin's alone.
func TestSandbox_PathsByApproval(t *testing.T) {
	t.Parallel()
	prof := &policy.Rules{Sandbox: policy.SandboxRules{Mode: policy.SandboxOn, Network: policy.NetworkOff, Read: []string{"/srv/r"}, Write: []string{"/srv/w"}}}
	g := New(Options{Workspace: t.TempDir(), Home: t.TempDir(), Policy: prof})
	sess := session.New("s")
	out := t.TempDir()
	x, y := filepath.Join(out, "x"), filepath.Join(out, "y")
	sess.ApprovePaths("/srv/approved")
	for _, tt := range []struct {
		name                 string
		d                    adapter.Decision
		approved             bool
		read, write, granted []string
	}{
		{"ask approved", adapter.Decision{Action: adapter.Ask, Paths: []string{x, y}, Writes: []string{x}}, true,
			sortedSet([]string{y, "/srv/approved", "/srv/r"}), []string{"/srv/w"}, []string{x}},
		{"allow without asking", adapter.Decision{Action: adapter.Allow, Paths: []string{x}, Writes: []string{x}}, false,
			sortedSet([]string{x, "/srv/approved", "/srv/r"}), []string{"/srv/w"}, nil},
		{"ask not approved", adapter.Decision{Action: adapter.Ask, Paths: []string{x}, Writes: []string{x}}, false,
			[]string{"/srv/approved", "/srv/r"}, []string{"/srv/w"}, nil},
	} {
		sb := g.Sandbox(sdk.Spec{}, sess, tt.d, tt.approved)
		if sb == nil || sb.Mode != sdk.SandboxOn || sb.Network != sdk.NetworkOff || !slices.Equal(sb.Read, tt.read) || !slices.Equal(sb.Write, tt.write) || !slices.Equal(sb.Granted, tt.granted) {
			t.Errorf("%s: Sandbox = %+v, want mode on, network off, read %q, write %q, granted %q", tt.name, sb, tt.read, tt.write, tt.granted)
		}
	}
	prof.Sandbox.Mode = policy.SandboxOff
	if sb := New(Options{Workspace: t.TempDir(), Policy: prof}).Sandbox(sdk.Spec{}, sess, adapter.Decision{Action: adapter.Ask, Paths: []string{"/etc/x"}}, true); sb == nil || sb.Mode != sdk.SandboxOff || len(sb.Write) > 0 {
		t.Errorf("off: Sandbox = %+v, want mode off and nothing else", sb)
	}
}

// TestExecPrograms_FollowsChanges: the kept list is rebuilt when a
// program of a rule appears in a searched folder, or a file found is
// rewritten in place, and only then.
func TestExecPrograms_FollowsChanges(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	g := execGuard(t, policy.ExecRule{Action: policy.ExecDeny, Program: "yagent-test-prog"})
	if p := g.ExecPrograms(); len(p) != 1 || len(p[0].Files) != 0 {
		t.Fatalf("ExecPrograms() = %+v, want the rule's program with no file yet", p)
	}
	g.ExecPrograms()
	if g.progs.builds != 1 {
		t.Fatalf("%d builds for two calls on an unchanged machine, want 1", g.progs.builds)
	}
	prog := filepath.Join(dir, "yagent-test-prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho one\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := g.ExecPrograms()
	if len(p[0].Files) != 1 || p[0].Files[0].Path != prog {
		t.Fatalf("after the program appeared: %+v, want %s", p, prog)
	}
	first := p[0].Files[0].SHA256
	fh, err := os.OpenFile(prog, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteString("#!/bin/sh\necho two, longer\n"); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	if p := g.ExecPrograms(); p[0].Files[0].SHA256 == first {
		t.Errorf("after a rewrite in place the sha256 is still %s", first)
	}
}

// TestSandbox_ApprovalOfAHoldingFolderOpensNothing: a command that names
// "/", the home folder or a folder holding the workspace ($HOME, "..") was
// approved for that name: under -y too, the sandbox opens nothing below
// it, while a file named outside is still granted.
func TestSandbox_ApprovalOfAHoldingFolderOpensNothing(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	home, ws := filepath.Join(root, "home"), filepath.Join(root, "home", "src", "ws")
	mkdir(t, ws)
	prof := &policy.Rules{Sandbox: policy.SandboxRules{Mode: policy.SandboxOn}}
	g := New(Options{Workspace: ws, Home: home, Policy: prof})
	out := filepath.Join(outside, "out.txt")
	paths := []string{"/", home, filepath.Dir(ws), root, out, ws}
	d := adapter.Decision{Action: adapter.Ask, Paths: paths, Writes: paths}
	sb := g.Sandbox(sdk.Spec{}, session.New("s"), d, true)
	if want := sortedSet([]string{out, ws}); sb == nil || !slices.Equal(sb.Granted, want) || len(sb.Read) > 0 {
		t.Errorf("Sandbox(approved %q): Granted %q, Read %q; want %q granted and nothing read", d.Paths, sb.Granted, sb.Read, want)
	}
	sb = g.Sandbox(sdk.Spec{}, session.New("s"), adapter.Decision{Action: adapter.Allow, Paths: []string{home}}, false)
	if slices.Contains(sb.Read, home) {
		t.Errorf("Sandbox(allowed %s).Read = %q: the home folder is opened", home, sb.Read)
	}
}

// TestJudgeExecIn_ReadOnlySoftensLikeTheCommandCheck: an ask rule on git
// asks nothing for git status in a repository whose config runs no
// program, as when the command line was judged; git push, a repository
// that runs a program, and a copy of rm named cat still ask.
func TestJudgeExecIn_ReadOnlySoftensLikeTheCommandCheck(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	git, _ = filepath.EvalSymlinks(git)
	root := t.TempDir()
	clean, hooked := filepath.Join(root, "clean"), filepath.Join(root, "hooked")
	for _, d := range []string{clean, hooked} {
		if out, err := exec.Command("git", "init", "-q", d).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
	}
	if out, err := exec.Command("git", "-C", hooked, "config", "core.pager", "sh -c id").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v %s", err, out)
	}
	rm, err := exec.LookPath("rm")
	if err != nil {
		t.Skip("no rm")
	}
	rm, _ = filepath.EvalSymlinks(rm)
	fakeCat := filepath.Join(root, "cat")
	b, _ := os.ReadFile(rm)
	if err := os.WriteFile(fakeCat, b, 0o755); err != nil {
		t.Fatal(err)
	}
	prof := &policy.Rules{Exec: policy.ExecRules{Rules: []policy.ExecRule{{Action: policy.ExecAsk, Program: "git"}, {Action: policy.ExecAsk, Program: "rm"}}}}
	g := New(Options{Workspace: clean, Home: t.TempDir(), Policy: prof})
	for _, tc := range []struct {
		name, prog, dir string
		argv            []string
		want            string
	}{
		{"git status in a clean repository", git, clean, []string{"git", "status", "--short"}, policy.ExecAllow},
		{"git status where the config runs a program", git, hooked, []string{"git", "status"}, policy.ExecAsk},
		{"git status in an unknown folder", git, "", []string{"git", "status"}, policy.ExecAsk},
		{"git push", git, clean, []string{"git", "push"}, policy.ExecAsk},
		{"a copy of rm named cat", fakeCat, clean, []string{"cat", "x"}, policy.ExecAsk},
	} {
		if got, rule := g.JudgeExecIn(tc.prog, tc.argv, nil, false, tc.dir); got != tc.want {
			t.Errorf("%s: JudgeExecIn = %s %s, want %s", tc.name, got, rule, tc.want)
		}
	}
}

// TestExecPrograms_InteractiveOnly: a program whose only rules ask before
// its REPL is marked, so a command without a terminal skips supervision
// for it; one with any other ask or deny rule is not.
func TestExecPrograms_InteractiveOnly(t *testing.T) {
	t.Parallel()
	prof := &policy.Rules{Exec: policy.ExecRules{Rules: []policy.ExecRule{
		{Action: policy.ExecAsk, Program: "python3", Interactive: true},
		{Action: policy.ExecAsk, Program: "perl", Interactive: true},
		{Action: policy.ExecDeny, Program: "perl", Args: []string{"-e"}},
		{Action: policy.ExecAsk, Program: "printenv"},
	}}}
	g := New(Options{Workspace: t.TempDir(), Home: t.TempDir(), Policy: prof})
	want := map[string]bool{"python3": true, "perl": false, "printenv": false}
	for _, p := range g.ExecPrograms() {
		if w, ok := want[p.Name]; ok && p.Interactive != w {
			t.Errorf("%s: Interactive = %v, want %v", p.Name, p.Interactive, w)
		}
		delete(want, p.Name)
	}
	if len(want) > 0 {
		t.Errorf("programs missing from the list: %v", want)
	}
}

// TestSandbox_ProgramsForCommandsAlone: the exec rules' programs reach a
// tool that takes a command, and no other: a read or an edit starts no
// command for the rules to judge.
func TestSandbox_ProgramsForCommandsAlone(t *testing.T) {
	t.Parallel()
	need(t, "/usr/bin/printenv")
	prof := &policy.Rules{Sandbox: policy.SandboxRules{Mode: policy.SandboxOn},
		Exec: policy.ExecRules{Rules: []policy.ExecRule{{Action: policy.ExecDeny, Program: "printenv"}}}}
	g := New(Options{Workspace: t.TempDir(), Home: t.TempDir(), Policy: prof})
	sess := session.New("s")
	run := sdk.Spec{Name: "run_bash", Roles: map[string]sdk.Role{"command": sdk.RoleCommand}}
	if sb := g.Sandbox(run, sess, adapter.Decision{Action: adapter.Allow}, false); sb == nil || len(sb.Programs) != 1 || sb.Programs[0].Name != "printenv" {
		t.Errorf("Sandbox(run_bash) = %+v, want printenv among its programs", sb)
	}
	read := sdk.Spec{Name: "read_file", Roles: map[string]sdk.Role{"path": sdk.RolePathRead}}
	if sb := g.Sandbox(read, sess, adapter.Decision{Action: adapter.Allow}, false); sb == nil || sb.Mode != sdk.SandboxOn || len(sb.Programs) != 0 {
		t.Errorf("Sandbox(read_file) = %+v, want mode on and no programs", sb)
	}
}

// TestSandbox_PageEgress: under sandbox.network: proxy a browser tool gets
// the session's proxy for requests, and the URLs a question approved go with
// it (their origins stay open to the pages); web_fetch alike. A URL the
// profile allowed without asking or a call not approved passes none; a
// tool that sends no request gets no proxy, nor any tool under network on.
func TestSandbox_PageEgress(t *testing.T) {
	t.Parallel()
	var got [][]string
	pages := func(_ *session.Session, approved []string) *sdk.Egress {
		got = append(got, approved)
		return &sdk.Egress{Proxy: "127.0.0.1:1"}
	}
	newGuard := func(network string) *WorkspaceGuard {
		prof := &policy.Rules{Sandbox: policy.SandboxRules{Mode: policy.SandboxOn, Network: network},
			Network: policy.NetworkRules{Allow: []string{"allowed.example"}}}
		return New(Options{Workspace: t.TempDir(), Home: t.TempDir(), Policy: prof, PageEgress: pages})
	}
	g := newGuard(policy.NetworkProxy)
	sess := session.New("s")
	nav := sdk.Spec{Name: "browser_navigate", Effect: sdk.EffectBrowser, Roles: map[string]sdk.Role{"url": sdk.RoleURL}}
	check := func(spec sdk.Spec, url string) adapter.Decision {
		t.Helper()
		return g.Check(t.Context(), adapter.GuardRequest{Spec: spec, Args: map[string]any{"url": url}, Session: sess})
	}
	asked := check(nav, "http://127.0.0.1:3000/app")
	if asked.Action != adapter.Ask || len(asked.URLs) != 1 || asked.URLs[0] != "http://127.0.0.1:3000/app" {
		t.Fatalf("Check(loopback) = %+v, want an ask naming the URL", asked)
	}
	if sb := g.Sandbox(nav, sess, asked, true); sb.Egress == nil || sb.Egress.Proxy != "127.0.0.1:1" {
		t.Errorf("Sandbox(approved navigation) = %+v, want the pages' proxy", sb)
	}
	g.Sandbox(nav, sess, asked, false)
	allowed := check(nav, "allowed.example")
	g.Sandbox(nav, sess, allowed, false)
	if want := [][]string{{"http://127.0.0.1:3000/app"}, nil, nil}; !reflect.DeepEqual(got, want) {
		t.Errorf("approved URLs passed: %q, want %q (approved, not approved, allowed without asking)", got, want)
	}
	got = nil
	fetch := sdk.Spec{Name: "web_fetch", Effect: sdk.EffectNetwork, Roles: map[string]sdk.Role{"url": sdk.RoleURL}}
	if sb := g.Sandbox(fetch, sess, check(fetch, "http://10.0.0.1/x"), true); sb.Egress == nil || len(got) != 1 || len(got[0]) != 1 || got[0][0] != "http://10.0.0.1/x" {
		t.Errorf("Sandbox(approved web_fetch) = %+v, approved %q; want the proxy and the URL", sb, got)
	}
	got = nil
	read := sdk.Spec{Name: "read_file", Effect: sdk.EffectRead, Roles: map[string]sdk.Role{"path": sdk.RolePathRead}}
	if sb := g.Sandbox(read, sess, adapter.Decision{Action: adapter.Allow}, false); sb.Egress != nil || got != nil {
		t.Errorf("Sandbox(read_file) = %+v, want no proxy", sb)
	}
	if sb := newGuard(policy.NetworkOn).Sandbox(nav, sess, asked, true); sb.Egress != nil || got != nil {
		t.Errorf("Sandbox under network on = %+v, want no proxy", sb)
	}
}

// hashGuard is a guard over one deny rule on program, keeping its sums in
// file, with a clock an hour ahead (every file looks old enough to keep).
func hashGuard(t *testing.T, file, program string) *WorkspaceGuard {
	t.Helper()
	g := New(Options{Workspace: t.TempDir(), Home: t.TempDir(), HashFile: file,
		Policy: &policy.Rules{Exec: policy.ExecRules{Rules: []policy.ExecRule{{Action: policy.ExecDeny, Program: program}}}}})
	g.hashes = policy.NewProgramHashes(file, func() time.Time { return time.Now().Add(time.Hour) })
	return g
}

func sumOf(t *testing.T, progs []sdk.ExecProgram, path string) string {
	t.Helper()
	for _, p := range progs {
		for _, f := range p.Files {
			if f.Path == path {
				return f.SHA256
			}
		}
	}
	t.Fatalf("no %s among %+v", path, progs)
	return ""
}

// ruleProg makes the program a hashGuard's rule names, alone on PATH, and
// names the file its sums are kept in.
func ruleProg(t *testing.T) (prog, file string) {
	t.Helper()
	dir := t.TempDir()
	prog = filepath.Join(dir, "yagent-test-rule-prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho one\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	return prog, filepath.Join(t.TempDir(), "exec-sums.json")
}

// TestExecPrograms_SumsKeptAcrossStarts: a second process (a new guard on
// the same file) reads the sums the first one saved and hashes nothing.
func TestExecPrograms_SumsKeptAcrossStarts(t *testing.T) {
	prog, file := ruleProg(t)
	first := hashGuard(t, file, "yagent-test-rule-prog")
	want := sumOf(t, first.ExecPrograms(), prog)
	if first.hashes.Hashed() == 0 {
		t.Fatal("the first start hashed nothing")
	}
	second := hashGuard(t, file, "yagent-test-rule-prog")
	if got := sumOf(t, second.ExecPrograms(), prog); got != want {
		t.Errorf("second start: sum %s, want %s", got, want)
	}
	if second.hashes.Hashed() != 0 {
		t.Errorf("second start hashed %d files, want none", second.hashes.Hashed())
	}
}

// TestExecPrograms_ChangedFileHashedAgain: a program rewritten in place
// with its size and mtime kept (touch -d) is hashed again by the next
// start: its ctime moved, and the saved sum no longer names it. A file
// that changed just now is not saved at all.
func TestExecPrograms_ChangedFileHashedAgain(t *testing.T) {
	prog, file := ruleProg(t)
	before := sumOf(t, hashGuard(t, file, "yagent-test-rule-prog").ExecPrograms(), prog)

	fi, err := os.Stat(prog)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho two\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(prog, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if now, err := os.Stat(prog); err != nil || filestat.Ctime(now) == filestat.Ctime(fi) {
		t.Skipf("the file system kept the ctime through a rewrite (%v): its clock is coarser than this test", err)
	}
	g := hashGuard(t, file, "yagent-test-rule-prog")
	after := sumOf(t, g.ExecPrograms(), prog)
	if after == before || g.hashes.Hashed() != 1 {
		t.Errorf("rewritten in place: sum %s (before %s), %d files hashed; want a new sum from one hash", after, before, g.hashes.Hashed())
	}

	// The same file seen by a start whose clock says it changed just now.
	fresh := filepath.Join(t.TempDir(), "exec-sums.json")
	g = hashGuard(t, fresh, "yagent-test-rule-prog")
	g.hashes = policy.NewProgramHashes(fresh, nil)
	g.ExecPrograms()
	if _, err := os.Stat(fresh); err == nil {
		b, _ := os.ReadFile(fresh)
		if strings.Contains(string(b), after) {
			t.Errorf("a file changed within the racy window was saved: %s", b)
		}
	}
}

// TestSandbox_CarriesTheBounds: the profile's bounds, temp folder size
// and Unix sockets reach the plugin with every call's sandbox.
func TestSandbox_CarriesTheBounds(t *testing.T) {
	t.Parallel()
	prof := &policy.Rules{Sandbox: policy.SandboxRules{Mode: policy.SandboxOn, Pids: 64, MemoryMB: 512, TmpSizeMB: 128, UnixSockets: []string{"/run/a.sock"}}}
	g := New(Options{Workspace: t.TempDir(), Home: t.TempDir(), Policy: prof})
	sb := g.Sandbox(sdk.Spec{}, session.New("s"), adapter.Decision{Action: adapter.Allow}, false)
	if sb == nil || sb.Pids != 64 || sb.MemoryMB != 512 || sb.TmpSizeMB != 128 || !slices.Equal(sb.UnixSockets, []string{"/run/a.sock"}) {
		t.Errorf("Sandbox = %+v, want pids 64, memory 512 MiB, temp 128 MiB and the socket", sb)
	}
}
