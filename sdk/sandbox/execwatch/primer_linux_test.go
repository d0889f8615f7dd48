//go:build linux && (amd64 || arm64)

package execwatch

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
		sup := startSupervisedFirst(t, cmd, r.judge)
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

// TestPrimerDisarmedOnceAnswered: once the primer has answered a tree's
// own exec, it watches that listener no more, even before the priming
// ends: an exec the tree makes then waits for the judge. The end of the
// priming is held until that exec is seen waiting in the kernel.
func TestPrimerDisarmedOnceAnswered(t *testing.T) {
	needSeccomp(t)
	bash := need(t, "bash")
	need(t, "printenv")
	if _, err := os.ReadFile("/proc/self/wchan"); err != nil {
		t.Skipf("/proc/PID/wchan is unreadable here (%v): a waiting exec cannot be seen", err)
	}
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()
	hold := func() { <-release }
	unprimeHook.Store(&hold)
	defer unprimeHook.Store(nil)

	r := denying(t, "printenv")
	var out bytes.Buffer
	cmd := exec.Command(bash, "-c", "exec printenv YAGENT_T")
	cmd.Env = append(os.Environ(), "YAGENT_T=secret-value")
	cmd.Stdout, cmd.Stderr = &out, &out
	sup := startSupervisedFirst(t, cmd, r.judge)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	wchan := fmt.Sprintf("/proc/%d/wchan", cmd.Process.Pid)
	deadline := time.Now().Add(waitBound)
	for done := false; !done; {
		select {
		case <-waited:
			done = true // the exec went on without the judge
			waited <- nil
		default:
			if b, _ := os.ReadFile(wchan); strings.Contains(string(b), "seccomp_do_user_notif") {
				done = true // it waits for an answer, as it should
			} else if time.Now().After(deadline) {
				t.Fatal("the exec of printenv neither ran nor waited")
			}
			time.Sleep(time.Millisecond)
		}
	}
	free()
	for _, ch := range []<-chan error{waited, sup} {
		select {
		case err := <-ch:
			if err != nil && ch == sup {
				t.Fatalf("Supervise: %v", err)
			}
		case <-time.After(waitBound):
			t.Fatal("the tree or its supervision did not end")
		}
	}
	if strings.Contains(out.String(), "secret-value") {
		t.Errorf("the primer let the exec of printenv go on unjudged: %q", out.String())
	}
	if _, ok := r.find(func(e Exec) bool { return filepath.Base(e.Path) == "printenv" }); !ok {
		t.Error("the judge never saw the exec of printenv")
	}
}

// TestPrimerLeavesNothing: every priming ends, its copy of the listener
// closed, whether its tree ran or never started.
func TestPrimerLeavesNothing(t *testing.T) {
	needSeccomp(t)
	bash := need(t, "bash")
	run(t, denying(t).judge, t.TempDir(), bash, "-c", "true") // the primer is up
	before := openFiles(t)
	for i := range 30 {
		if i%3 == 0 {
			// A filter whose command never starts: its tree is the
			// thread alone, which ends.
			RunLocked(func() {
				unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
				if f, err := InstallFilter(Filter{Exec: true}); err == nil {
					f.Close()
				}
			})
			continue
		}
		run(t, denying(t).judge, t.TempDir(), bash, "-c", "exit 3")
	}
	deadline := time.Now().Add(waitBound)
	for {
		pending := 0
		primings.Range(func(any, any) bool { pending++; return true })
		after := openFiles(t)
		if pending == 0 && after <= before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d primings still pending, %d files open against %d before", pending, after, before)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func openFiles(t *testing.T) int {
	t.Helper()
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// TestDeadExecNotJudged: what was read of an exec whose process died
// meanwhile is not judged: its pid could name another process by then.
func TestDeadExecNotJudged(t *testing.T) {
	needSeccomp(t)
	bash := need(t, "bash")
	need(t, "printenv")
	kill := func(e Exec) {
		if filepath.Base(e.Path) == "printenv" {
			unix.Kill(e.Pid, unix.SIGKILL)
			// Killed, it leaves its exec once the kernel has seen the
			// signal: the supervisor checks after this returns.
			for range 2000 {
				if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", e.Pid)); err != nil || strings.Contains(string(b), ") Z ") {
					return
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	identifiedHook.Store(&kill)
	defer identifiedHook.Store(nil)
	r := denying(t)
	out := run(t, r.judge, t.TempDir(), bash, "-c", "printenv YAGENT_T; echo after=$?")
	if _, ok := r.find(func(e Exec) bool { return filepath.Base(e.Path) == "printenv" }); ok {
		t.Error("the judge got the exec of a process that died while it was read")
	}
	if !strings.Contains(out, "after=137") {
		t.Errorf("output %q, want the killed printenv's status 137", out)
	}
}

// startSupervisedFirst starts cmd as the shell does: the filter installed
// and its supervision begun before the fork. Supervise's error comes on
// the channel.
func startSupervisedFirst(t *testing.T, cmd *exec.Cmd, judge Judge) <-chan error {
	t.Helper()
	sup := make(chan error, 1)
	started := make(chan error, 1)
	RunLocked(func() {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			started <- err
			return
		}
		f, err := InstallFilter(Filter{Exec: true})
		if err != nil {
			started <- err
			return
		}
		go func() { sup <- Supervise(context.Background(), f, Supervision{Judge: judge}) }()
		started <- cmd.Start()
	})
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	return sup
}
