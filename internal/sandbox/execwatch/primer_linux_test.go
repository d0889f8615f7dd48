//go:build linux && (amd64 || arm64)

package execwatch

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestPrimerAnswersOnlyTheFirstExec: the primer lets each command's own
// exec go on unjudged, and no other: every later exec of the tree, by a
// child or by the same process (exec), reaches the judge, so a deny rule
// holds for each of many quick ones, with several trees starting at once.
func TestPrimerAnswersOnlyTheFirstExec(t *testing.T) {
	needSeccomp(t)
	bash := need(t, "bash")
	need(t, "printenv")
	need(t, "seq")
	const n = 30
	script := fmt.Sprintf(`for i in $(seq %d); do printenv YAGENT_T; done; exec printenv YAGENT_T`, n)
	for i := range 4 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			r := denying(t, "printenv")
			out := run(t, r.judge, t.TempDir(), bash, "-c", script)
			if strings.Contains(out, "secret-value") {
				t.Errorf("a denied printenv ran: %q", out)
			}
			denied, own := 0, 0
			r.mu.Lock()
			for _, e := range r.seen {
				switch {
				case filepath.Base(e.Path) == "printenv":
					denied++
				case e.Path == bash && len(e.Argv) == 3 && e.Argv[2] == script:
					own++
				}
			}
			r.mu.Unlock()
			if denied != n+1 {
				t.Errorf("the judge saw %d execs of printenv, want %d", denied, n+1)
			}
			if own != 0 {
				t.Errorf("the judge saw the command's own exec %d times, want 0 (the primer answers it)", own)
			}
		})
	}
}

// TestPrimerFirstExecUnjudgedWhenSupervisedFirst: supervision may start
// before the fork (the shell does, so a command's first exec of its own
// has a judge at once); the command's own exec still goes to the primer
// alone, never to the judge.
func TestPrimerFirstExecUnjudgedWhenSupervisedFirst(t *testing.T) {
	needSeccomp(t)
	bash := need(t, "bash")
	const runs = 40
	for i := range runs {
		r := denying(t)
		script := fmt.Sprintf("exit %d", i%7)
		cmd := exec.Command(bash, "-c", script)
		sup := make(chan error, 1)
		started := make(chan error, 1)
		RunLocked(func() {
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				started <- err
				return
			}
			f, err := InstallFilter()
			if err != nil {
				started <- err
				return
			}
			go func() { sup <- Supervise(context.Background(), f, r.judge) }()
			started <- cmd.Start()
		})
		if err := <-started; err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		select {
		case err := <-sup:
			if err != nil {
				t.Fatalf("Supervise: %v", err)
			}
		case <-time.After(waitBound):
			t.Fatal("Supervise did not return after the tree exited")
		}
		if e, ok := r.find(func(e Exec) bool { return len(e.Argv) == 3 && e.Argv[2] == script }); ok {
			t.Fatalf("run %d: the judge saw the command's own exec %q", i, e.Argv)
		}
	}
}
