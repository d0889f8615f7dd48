package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox"
)

func TestRefusedPaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"cat: /var/tmp/x/.ssh/id: Permission denied", []string{"/var/tmp/x/.ssh/id"}},
		{"/usr/bin/bash: line 1: /var/tmp/zz: Permission denied", []string{"/var/tmp/zz"}},
		{"PermissionError: [Errno 13] Permission denied: '/var/tmp/q'", []string{"/var/tmp/q"}},
		{"ls: cannot open directory '/root': Permission denied", []string{"/root"}},
		{"/usr/bin/bash: /opt/x/run.sh: Operation not permitted", []string{"/opt/x/run.sh"}},
		{"mv: cannot move '/w/a' to '/var/tmp/b': Permission denied", []string{"/var/tmp/b"}},
	} {
		if got := refusedPaths(tc.line); !slices.Equal(got, tc.want) {
			t.Errorf("refusedPaths(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

// sandboxFixture is a Manager whose calls carry a sandbox, with a home
// and an outside folder under /var/tmp (the temp folder is writable by
// design, so a target there would prove nothing).
type sandboxFixture struct {
	*fixture
	home, outside string
}

func newSandboxFixture(t *testing.T) *sandboxFixture {
	t.Helper()
	if l := sandbox.Probe(); l.LandlockABI == 0 {
		t.Skipf("the Landlock layer is missing here (%s): commands run without the file wall", l.Missing[sandbox.LayerLandlock])
	}
	root, err := os.MkdirTemp("/var/tmp", "yagent-confine-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	f := &sandboxFixture{fixture: newFixture(t, Options{}), home: filepath.Join(root, "home"), outside: filepath.Join(root, "outside")}
	f.ws = filepath.Join(root, "ws")
	for _, d := range []string{f.home, f.outside, f.ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", f.home)
	return f
}

func (f *sandboxFixture) call(progs []sdk.ExecProgram) context.Context {
	ctx := sdk.WithCall(context.Background(), sdk.CallInfo{
		ID: "call", Tool: "run_bash", SessionID: "s1", Workspace: f.ws,
		Sandbox: &sdk.Sandbox{Mode: sdk.SandboxOn, Network: sdk.NetworkOn, Programs: progs},
	})
	return sdk.WithHost(ctx, f.host)
}

func (f *sandboxFixture) run(t *testing.T, ctx context.Context, command string) string {
	t.Helper()
	res, err := f.m.Run(ctx, RunRequest{Command: command})
	if err != nil {
		if te, ok := sdk.AsToolError(err); ok {
			return te.Message
		}
		t.Fatalf("Run(%q): %v", command, err)
	}
	return res.Text
}

// A write outside the workspace through a path built at run time fails,
// and the result says the sandbox refused it and how to get it allowed.
func TestSandbox_RuntimeBuiltWriteRefusedWithNote(t *testing.T) {
	f := newSandboxFixture(t)
	target := filepath.Join(f.outside, "out")
	text := f.run(t, f.call(nil), `d=$(printf %s `+f.outside+`); echo x > "$d/out"`)
	if _, err := os.Stat(target); err == nil {
		t.Fatalf("the command wrote %s outside the workspace: %s", target, text)
	}
	if !strings.Contains(text, "yagent sandbox: commands may not create "+target) || !strings.Contains(text, "sandbox.write") {
		t.Errorf("the result does not say what the sandbox refused and how to allow it:\n%s", text)
	}
	// The workspace itself stays writable.
	if text := f.run(t, f.call(nil), "echo x > inside && cat inside"); !strings.Contains(text, "x") {
		t.Errorf("a write inside the workspace failed: %s", text)
	}
}

// A script reads a private file of the home: the read fails, the secret
// stays out of the result, and the result names the refused path.
func TestSandbox_PrivateHomeReadThroughScript(t *testing.T) {
	f := newSandboxFixture(t)
	secret := filepath.Join(f.home, ".ssh", "id_test")
	if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("SECRET-7f3a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.ws, "s.sh"), []byte("cat \"$HOME/.ssh/id_test\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	text := f.run(t, f.call(nil), "bash s.sh")
	if strings.Contains(text, "SECRET-7f3a") {
		t.Fatalf("the script read the home's private file: %s", text)
	}
	if !strings.Contains(text, "yagent sandbox: commands may not read "+secret) {
		t.Errorf("the result does not name the refused read:\n%s", text)
	}
}

// With sandbox off the same script reads the file: the behaviour of
// docs/ARCHITECTURE.md#sandbox-off.
func TestSandbox_OffRunsAsBefore(t *testing.T) {
	f := newSandboxFixture(t)
	secret := filepath.Join(f.home, "plain")
	if err := os.WriteFile(secret, []byte("PLAIN-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := sdk.WithHost(sdk.WithCall(context.Background(), sdk.CallInfo{
		ID: "call", Tool: "run_bash", SessionID: "s1", Workspace: f.ws, Sandbox: &sdk.Sandbox{Mode: sdk.SandboxOff},
	}), f.host)
	if text := f.run(t, ctx, "cat $HOME/plain"); !strings.Contains(text, "PLAIN-1") {
		t.Errorf("with sandbox off the command could not read %s: %s", secret, text)
	}
}

// printenvProgram is the rule program of the exec tests, with its files
// as the host would send them.
func printenvProgram(t *testing.T) []sdk.ExecProgram {
	t.Helper()
	if l := sandbox.Probe(); !l.Seccomp {
		t.Skipf("the seccomp exec layer is missing here (%s): exec rules hold at parse time only", l.Missing[sandbox.LayerSeccomp])
	}
	p, err := exec.LookPath("printenv")
	if err != nil {
		t.Skip("no printenv on PATH")
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return []sdk.ExecProgram{{Name: "printenv", Files: []sdk.ProgramFile{{Path: real, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])}}}}
}

// A program the host refuses fails wherever the command starts it from —
// make, an interpreter, a renamed copy — and the output names the refusal;
// the host is asked with the program's real file.
func TestSandbox_ExecRefusedWhereverStarted(t *testing.T) {
	f := newSandboxFixture(t)
	progs := printenvProgram(t)
	f.host.refuse = &sdk.ApprovalResponse{Reason: "the profile rule {action: deny, program: printenv} denies it"}
	if err := os.WriteFile(filepath.Join(f.ws, "Makefile"), []byte("all:\n\tprintenv YMARK\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"make":    "make -s",
		"python3": `python3 -c "import os; os.system('printenv YMARK')"`,
		"copy":    `cp "$(command -v printenv)" ./pe && ./pe YMARK`,
	}
	for name, cmd := range cases {
		if _, err := exec.LookPath(strings.Fields(cmd)[0]); err != nil && name != "copy" {
			t.Logf("%s: skipped, %s is not installed", name, name)
			continue
		}
		text := f.run(t, f.call(progs), "export YMARK=mark-91c; "+cmd)
		if strings.Contains(text, "mark-91c") {
			t.Errorf("%s: the refused program ran: %s", name, text)
		}
		if !strings.Contains(text, notePrefix+"the exec of") || !strings.Contains(text, "denies it") {
			t.Errorf("%s: the output does not say the exec was refused and why: %s", name, text)
		}
	}
	asked := f.host.asked()
	if len(asked) == 0 {
		t.Fatal("the host was never asked")
	}
	for _, req := range asked {
		if req.Kind != sdk.ApprovalExec || len(req.Argv) == 0 {
			t.Errorf("asked %+v, want an exec request with its argv", req)
		}
	}
}

// An exec the host approves runs; an exec of a program no rule names never
// reaches the host.
func TestSandbox_ExecApprovedRunsOthersNeedNoHost(t *testing.T) {
	f := newSandboxFixture(t)
	progs := printenvProgram(t)
	text := f.run(t, f.call(progs), "export YMARK=mark-5d0; ls >/dev/null; cat /dev/null; printenv YMARK")
	if !strings.Contains(text, "mark-5d0") {
		t.Errorf("the approved exec did not run: %s", text)
	}
	asked := f.host.asked()
	if len(asked) != 1 || asked[0].Program != progs[0].Files[0].Path {
		t.Errorf("asked %+v, want one request, for %s only", asked, progs[0].Files[0].Path)
	}
}

// A task read after its call says what the sandbox refused it, and that
// it keeps the rules it started with.
func TestSandbox_TaskSaysItKeepsItsRules(t *testing.T) {
	f := newSandboxFixture(t)
	secret := filepath.Join(f.home, ".aws", "credentials")
	if err := os.MkdirAll(filepath.Dir(secret), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("KEY-33\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := f.call(nil)
	res, err := f.m.Run(ctx, RunRequest{Command: "sleep 0.5; cat " + secret, Yield: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	id := data(t, res).TaskID
	if id == "" || data(t, res).Status != "running" {
		t.Fatalf("the command did not yield: %s", res.Text)
	}
	w, err := f.m.Wait(ctx, id, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(w.Text, "KEY-33") {
		t.Fatalf("the task read the secret: %s", w.Text)
	}
	if !strings.Contains(w.Text, "may not read "+secret) || !strings.Contains(w.Text, "keeps the sandbox it started with") {
		t.Errorf("shell_wait does not explain the refusal to the task:\n%s", w.Text)
	}
}

// A program whose rules only ask before its REPL needs a terminal to
// match: a pipe command's execs of it never reach the host, a terminal
// command's do.
func TestSandbox_InteractiveRulesWatchTerminalsOnly(t *testing.T) {
	f := newSandboxFixture(t)
	progs := printenvProgram(t)
	progs[0].Interactive = true
	if text := f.run(t, f.call(progs), "printenv HOME"); !strings.Contains(text, f.home) {
		t.Fatalf("printenv did not run: %s", text)
	}
	if asked := f.host.asked(); len(asked) != 0 {
		t.Errorf("a pipe command's exec was put to the host: %+v", asked)
	}
	res, err := f.m.Run(f.call(progs), RunRequest{Command: "printenv HOME", Mode: ModePTY})
	if err != nil {
		t.Fatal(err)
	}
	if asked := f.host.asked(); len(asked) != 1 || !asked[0].Terminal {
		t.Errorf("a terminal command's exec of printenv: asked %+v, want one request with Terminal set (%s)", asked, res.Text)
	}
}

// A call does not yield while an exec of its command waits for the host:
// only a call in flight can get the answer.
func TestSandbox_NoYieldWhileAnExecIsAsked(t *testing.T) {
	f := newSandboxFixture(t)
	progs := printenvProgram(t)
	asked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f.host.during = func() {
		once.Do(func() { close(asked) })
		<-release
	}
	// printenv is the command's first exec: asked long before the yield.
	ch := f.runAsync(f.call(progs), RunRequest{Command: "printenv HOME", Yield: 200 * time.Millisecond})
	<-asked
	select {
	case out := <-ch:
		close(release)
		t.Fatalf("the call returned while its exec waited for the host: %v %v", out.res, out.err)
	case <-time.After(500 * time.Millisecond): // well past the yield
	}
	close(release)
	out := await(t, ch, 10*time.Second, "the call")
	if out.err != nil {
		t.Fatal(out.err)
	}
	text := out.res.Text
	// The yield's clock runs again once the exec is answered: on a loaded
	// machine the rest of the 200 ms can end before printenv has finished,
	// and the command goes on as a task. Its output is then split between
	// this answer and the task's.
	if d := data(t, out.res); d.TaskID != "" && d.Status == "running" {
		w, err := f.m.Wait(f.call(progs), d.TaskID, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		text += w.Text
	}
	if !strings.Contains(text, f.home) {
		t.Errorf("after the answer the command should have run: %s", text)
	}
}

// A setuid or setgid mode is refused with no exec rule in the profile, and
// the result names the call, the file and the mode, and what works
// instead: a few refusals one by one, the rest in one line. With sandbox
// off the mode is set as before.
func TestSandbox_SetIDModeRefusedWithNote(t *testing.T) {
	f := newSandboxFixture(t)
	if !sandbox.Probe().Seccomp {
		t.Skipf("seccomp user notification is missing here (%s): the refusal is not reported", sandbox.Probe().Missing[sandbox.LayerSeccomp])
	}
	text := f.run(t, f.call(nil), "cp /bin/true x && chmod u+s x; stat -c %a x")
	x := filepath.Join(f.ws, "x")
	for _, want := range []string{"\n755", "yagent sandbox: the fchmodat of " + x + " to mode 4755 was refused (Operation not permitted)", "setuid or setgid", "chmod 755"} {
		if !strings.Contains(text, want) {
			t.Errorf("the result lacks %q:\n%s", want, text)
		}
	}
	text = f.run(t, f.call(nil), "for i in 1 2 3 4 5 6; do mkdir -m 2755 d$i; done; ls -d d* 2>/dev/null | wc -l")
	if n := strings.Count(text, "was refused"); n != maxSetIDNotes || strings.Count(text, "setuid or setgid bit") != 1 ||
		!strings.Contains(text, "further setuid or setgid modes") || !strings.Contains(text, "\n0\n") {
		t.Errorf("six refused mkdirs: %d named, want %d, the first with why, and one line for the rest, and no folder made:\n%s", n, maxSetIDNotes, text)
	}
	off := sdk.WithHost(sdk.WithCall(context.Background(), sdk.CallInfo{
		ID: "call", Tool: "run_bash", SessionID: "s1", Workspace: f.ws, Sandbox: &sdk.Sandbox{Mode: sdk.SandboxOff},
	}), f.host)
	if text := f.run(t, off, "chmod u+s x && stat -c %a x"); !strings.Contains(text, "4755") || strings.Contains(text, "yagent sandbox") {
		t.Errorf("with sandbox off chmod u+s did not work as before: %s", text)
	}
}
