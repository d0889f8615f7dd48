package guard

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/sdk"
)

// tempFixture is the fixture with a session temp folder and, beside it,
// another session's, under one root of the host's:
//
//	root/tmproot/s.1.2.aa    the session's folder: file, up (→ ../s.1.2.bb/theirs),
//	                         abs (→ /var/tmp/file), out (→ root/other/secret)
//	root/tmproot/s.1.2.bb    another session's: theirs
//
// The session's folder stands for /var/tmp, which the fixture (under
// /tmp) is not in.
type tempFixture struct {
	fixture
	temp   *sdk.TempFolder
	theirs string
}

func newTempFixture(t *testing.T) tempFixture {
	t.Helper()
	f := tempFixture{fixture: newFixture(t)}
	root := filepath.Join(f.root, "tmproot")
	mine, theirs := filepath.Join(root, "s.1.2.aa"), filepath.Join(root, "s.1.2.bb")
	mkdir(t, mine)
	mkdir(t, theirs)
	write(t, filepath.Join(mine, "file"), "mine")
	f.theirs = filepath.Join(theirs, "theirs")
	write(t, f.theirs, "theirs")
	for link, target := range map[string]string{
		"up":  "../s.1.2.bb/theirs",
		"abs": "/var/tmp/file",
		"out": filepath.Join(f.other, "secret"),
	} {
		if err := os.Symlink(target, filepath.Join(mine, link)); err != nil {
			t.Fatal(err)
		}
	}
	f.temp = &sdk.TempFolder{Dir: mine, Over: []string{"/var/tmp"}}
	return f
}

func (f tempFixture) check(g *WorkspaceGuard, sp sdk.Spec, args map[string]any) adapter.Decision {
	return g.Check(context.Background(), adapter.GuardRequest{Spec: sp, Args: args, Session: session.New("s"), Trusted: true, Temp: f.temp})
}

func sentPath(d adapter.Decision, given string) string {
	if d.Args == nil {
		return given
	}
	s, _ := d.Args["path"].(string)
	return s
}

// TestCheck_TempPathsNameTheSessionsFolder: a file tool's path under a
// temp folder the session's own stands for is judged, and sent, as the
// file in it, which it reads and writes without asking; a symlink there
// is followed as a command would follow it, so neither an absolute target
// under /var/tmp nor ".." reaches the machine's /var/tmp or another
// session's folder.
func TestCheck_TempPathsNameTheSessionsFolder(t *testing.T) {
	f := newTempFixture(t)
	g := f.guard(nil)
	for _, c := range []struct {
		name, path string
		write      bool
		want       adapter.Action
		sent       string
	}{
		{"read", "/var/tmp/file", false, adapter.Allow, filepath.Join(f.temp.Dir, "file")},
		{"write a new file", "/var/tmp/new/b", true, adapter.Allow, filepath.Join(f.temp.Dir, "new", "b")},
		{"/dev/shm is the machine's here", "/dev/shm/x", false, adapter.Ask, "/dev/shm/x"},
		{"an absolute link stays in the folder", "/var/tmp/abs", false, adapter.Allow, filepath.Join(f.temp.Dir, "file")},
		{"a link out of it asks", "/var/tmp/out", false, adapter.Ask, filepath.Join(f.other, "secret")},
		{"'..' climbs as the command's /var/tmp does", "/var/tmp/up", false, adapter.Ask, "/var/s.1.2.bb/theirs"},
		{"the folder itself is no file to write", "/var/tmp", true, adapter.Ask, f.temp.Dir},
		{"its own name in the host is, for the session, inside it", f.temp.Dir + "/file", false, adapter.Allow, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp := spec(sdk.EffectRead, readRoles)
			if c.write {
				sp = spec(sdk.EffectWrite, writeRoles)
			}
			d := f.check(g, sp, readArgs(c.path))
			got := sentPath(d, c.path)
			if d.Action != c.want || (c.sent != "" && got != c.sent) {
				t.Errorf("%s: %v (%s), sent %q; want %v, sent %q", c.path, d.Action, d.Reason, got, c.want, c.sent)
			}
			if got == f.theirs || got == "/var/tmp/file" {
				t.Errorf("%s reached %s", c.path, got)
			}
			if c.want == adapter.Allow && d.Basis != adapter.BasisSessionTemp {
				t.Errorf("basis %q, want %q", d.Basis, adapter.BasisSessionTemp)
			}
		})
	}
}

// TestCheck_TempFolderWithNothingBound: where the session's folder stands
// for no temp folder (the sandbox off, no mount namespace), /var/tmp is
// the machine's, and the folder itself (the commands' TMPDIR) is read and
// written without asking.
func TestCheck_TempFolderWithNothingBound(t *testing.T) {
	f := newTempFixture(t)
	f.temp = &sdk.TempFolder{Dir: f.temp.Dir}
	g := f.guard(nil)
	if d := f.check(g, spec(sdk.EffectRead, readRoles), readArgs("/var/tmp/file")); d.Action != adapter.Ask || sentPath(d, "/var/tmp/file") != "/var/tmp/file" {
		t.Errorf("/var/tmp/file with nothing bound: %v, sent %q; want an ask about the machine's file", d.Action, sentPath(d, "/var/tmp/file"))
	}
	p := filepath.Join(f.temp.Dir, "w")
	if d := f.check(g, spec(sdk.EffectWrite, writeRoles), readArgs(p)); d.Action != adapter.Allow {
		t.Errorf("a write into the session's folder by its name: %v (%s), want allow", d.Action, d.Reason)
	}
	if d := f.check(g, spec(sdk.EffectRead, readRoles), readArgs(f.theirs)); d.Action != adapter.Ask {
		t.Errorf("another session's folder: %v, want an ask", d.Action)
	}
}

// TestCheck_CommandsSeeTheSessionsTemp: a command's paths under a temp
// folder the session's own stands for are judged in it (a glob lists it),
// and $TMPDIR is what the command gets.
func TestCheck_CommandsSeeTheSessionsTemp(t *testing.T) {
	f := newTempFixture(t)
	g := f.guard(nil)
	ex := spec(sdk.EffectExec, execRoles)
	for cmd, want := range map[string]adapter.Action{
		"cat /var/tmp/file /var/tmp/new":     adapter.Allow,
		"cat /var/tmp/abs":                   adapter.Allow,
		"cat /var/tmp/out":                   adapter.Ask, // a link of the folder's that leads out
		"cat /var/tmp/*":                     adapter.Ask, // one match is that link
		"cat /var/tmp/up":                    adapter.Ask,
		"cd /var/tmp && cat file":            adapter.Allow,
		"cd -P /var/tmp/up/.. && cat x":      adapter.Ask,
		"cat " + f.theirs:                    adapter.Ask,
		"cat /dev/shm/x":                     adapter.Ask, // the machine's here
		"echo x > /var/tmp/new; ls /var/tmp": adapter.Allow,
	} {
		if d := f.check(g, ex, cmdArgs(cmd)); d.Action != want {
			t.Errorf("%s: %v (%s), want %v", cmd, d.Action, d.Reason, want)
		}
	}
	over := &sdk.TempFolder{Dir: f.temp.Dir, Over: []string{"/tmp"}}
	if s := analyzeCommand(`cat "$TMPDIR/x"`, f.ws, f.home, over); !slices.Contains(s.paths, "/tmp/x") {
		t.Errorf("$TMPDIR/x with the folder over /tmp: paths %v, want /tmp/x", s.paths)
	}
	if s := analyzeCommand(`cat "$TMPDIR/x"`, f.ws, f.home, &sdk.TempFolder{Dir: f.temp.Dir}); !slices.Contains(s.paths, filepath.Join(f.temp.Dir, "x")) {
		t.Errorf("$TMPDIR/x with nothing bound: paths %v, want the folder's own x", s.paths)
	}
}
