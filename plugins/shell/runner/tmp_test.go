//go:build linux

package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/internal/sessiontmp"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox"
)

// tmpFixture is a Manager whose workspace is outside /tmp (under
// /var/tmp), and the host's session folders.
type tmpFixture struct {
	*fixture
	folders *sessiontmp.Folders
}

func newTmpFixture(t *testing.T) *tmpFixture {
	t.Helper()
	l := sandbox.Probe()
	if l.LandlockABI == 0 || !l.MountNS {
		t.Skipf("the sandbox's Landlock and mount namespaces are needed: %v", l.Missing)
	}
	f := newFixture(t, Options{})
	ws, err := os.MkdirTemp("/var/tmp", "runner-ws-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	f.ws, _ = filepath.EvalSymlinks(ws)
	folders, err := sessiontmp.Open(sessiontmp.Options{Root: t.TempDir(), Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(folders.Close)
	return &tmpFixture{fixture: f, folders: folders}
}

// ctxTmp is a call of session on, the sandbox on (or off), with the
// session's folder bound over over.
func (f *tmpFixture) ctxTmp(t *testing.T, session, mode string, over ...string) (context.Context, string) {
	t.Helper()
	dir, err := f.folders.Dir(session)
	if err != nil {
		t.Fatal(err)
	}
	ctx := sdk.WithCall(context.Background(), sdk.CallInfo{ID: "call", Tool: "run_bash", SessionID: session, Workspace: f.ws,
		Sandbox: &sdk.Sandbox{Mode: mode, Network: sdk.NetworkOn}, Temp: &sdk.TempFolder{Dir: dir, Over: over}})
	return sdk.WithHost(ctx, f.host), dir
}

func runText(t *testing.T, m *Manager, ctx context.Context, req RunRequest) string {
	t.Helper()
	res, err := m.Run(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", req.Command, err)
	}
	return res.Text
}

func uniqName(name string) string {
	b := make([]byte, 4)
	rand.Read(b)
	return name + "-" + hex.EncodeToString(b)
}

// TestTemp_CommandsTmpIsTheSessionFolder: a command's /tmp and $TMPDIR are
// the session's folder; a file the host has in the machine's /tmp is not
// there for it.
func TestTemp_CommandsTmpIsTheSessionFolder(t *testing.T) {
	f := newTmpFixture(t)
	planted := uniqName("planted")
	os.WriteFile("/tmp/"+planted, []byte("THE-HOST-S\n"), 0o644)
	t.Cleanup(func() { os.Remove("/tmp/" + planted) })
	ctx, dir := f.ctxTmp(t, "s1", sdk.SandboxOn, "/tmp", "/dev/shm")
	name := uniqName("mine")
	out := runText(t, f.m, ctx, RunRequest{Command: `echo "TMPDIR=$TMPDIR"; cat /tmp/` + planted + ` 2>&1; echo made > /tmp/` + name + `; t=$(mktemp); echo "mktemp=$t"`})
	if !strings.Contains(out, "TMPDIR=/tmp\n") {
		t.Errorf("TMPDIR: %q, want /tmp", out)
	}
	if strings.Contains(out, "THE-HOST-S") {
		t.Errorf("the command read the machine's /tmp/%s: %q", planted, out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != "made\n" {
		t.Errorf("/tmp/%s is not in the session's folder %s: %v %q (output %q)", name, dir, err, b, out)
	}
	os.Remove("/tmp/" + name)
}

// TestTemp_SessionsKeepTheirOwn: a file one session's command leaves in
// /tmp is not in another session's.
func TestTemp_SessionsKeepTheirOwn(t *testing.T) {
	f := newTmpFixture(t)
	a, _ := f.ctxTmp(t, "a", sdk.SandboxOn, "/tmp")
	b, _ := f.ctxTmp(t, "b", sdk.SandboxOn, "/tmp")
	name := uniqName("who")
	runText(t, f.m, a, RunRequest{Command: `echo A > /tmp/` + name})
	if out := runText(t, f.m, b, RunRequest{Command: `cat /tmp/` + name + ` 2>/dev/null || echo none`}); strings.TrimSpace(out) != "none" {
		t.Errorf("session b reads %q in session a's /tmp", out)
	}
	if out := runText(t, f.m, a, RunRequest{Command: `cat /tmp/` + name}); strings.TrimSpace(out) != "A" {
		t.Errorf("session a reads %q, want its own file", out)
	}
}

// TestTemp_TasksAndTheNextCommandShareIt: a yielded task and a background
// command write in the same /tmp the next command reads; the background
// command is recorded as holding the session's folder.
func TestTemp_TasksAndTheNextCommandShareIt(t *testing.T) {
	f := newTmpFixture(t)
	ctx, dir := f.ctxTmp(t, "s1", sdk.SandboxOn, "/tmp")
	pids := filepath.Join(f.ws, "pids") // not under /tmp: the command's /tmp is another
	killAtEnd(t, pids)
	y, bg := uniqName("yielded"), uniqName("bg")
	res, err := f.m.Run(ctx, RunRequest{Command: `echo $$ >> ` + pids + `; echo from-task > /tmp/` + y + `; sleep 30`, Yield: 300 * time.Millisecond})
	if err != nil || data(t, res).Status != "running" {
		t.Fatalf("want a yielded task: %v %v", res, err)
	}
	if _, err := f.m.Run(ctx, RunRequest{Command: `echo $$ >> ` + pids + `; echo from-bg > /tmp/` + bg + `; exec sleep 30`, Background: true}); err != nil {
		t.Fatal(err)
	}
	waitForPidsWritten(t, pids, 2)
	out := runText(t, f.m, ctx, RunRequest{Command: `sleep 0.2; cat /tmp/` + y + ` /tmp/` + bg})
	if !strings.Contains(out, "from-task") || !strings.Contains(out, "from-bg") {
		t.Errorf("the next command reads %q, want the task's and the background command's files", out)
	}
	recs, _ := os.ReadDir(dir + ".hold")
	if len(recs) != 1 {
		t.Errorf("%d records hold the session's folder, want the background command's one", len(recs))
	}
}

// TestTemp_NoMountNamespaceTmpdirIsTheFolder: with the sandbox off,
// commands see the machine's /tmp, and TMPDIR is the session's folder.
func TestTemp_NoMountNamespaceTmpdirIsTheFolder(t *testing.T) {
	f := newTmpFixture(t)
	ctx, dir := f.ctxTmp(t, "s1", sdk.SandboxOff)
	planted := uniqName("planted")
	os.WriteFile("/tmp/"+planted, []byte("SHARED\n"), 0o644)
	t.Cleanup(func() { os.Remove("/tmp/" + planted) })
	out := runText(t, f.m, ctx, RunRequest{Command: `echo "TMPDIR=$TMPDIR"; cat /tmp/` + planted})
	if !strings.Contains(out, "TMPDIR="+dir+"\n") || !strings.Contains(out, "SHARED") {
		t.Errorf("sandbox off: %q, want TMPDIR=%s and the machine's /tmp", out, dir)
	}
}
