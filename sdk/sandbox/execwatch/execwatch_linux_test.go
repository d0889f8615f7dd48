//go:build linux && (amd64 || arm64)

package execwatch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDeny holds a deny rule on printenv for every way a tree reaches it,
// and lets everything else run.
func TestDeny(t *testing.T) {
	needSeccomp(t)
	bash := need(t, "bash")
	dir := t.TempDir()
	cases := []struct {
		name   string
		argv   []string
		setup  func(t *testing.T) []string // argv, when it needs files first
		denied bool
		want   string // in the output
	}{
		{name: "bash", argv: []string{bash, "-c", "printenv YAGENT_T; echo rc=$?"}, denied: true, want: "rc=126"},
		{name: "relative name", argv: []string{bash, "-c", "cd /usr/bin && ./printenv YAGENT_T; echo rc=$?"}, denied: true, want: "rc=126"},
		{name: "true", argv: []string{bash, "-c", "true; echo rc=$?"}, want: "rc=0"},
		{name: "ls", argv: []string{bash, "-c", "ls / >/dev/null; echo rc=$?"}, want: "rc=0"},
		{name: "make", setup: func(t *testing.T) []string {
			need(t, "make")
			os.WriteFile(filepath.Join(dir, "Makefile"), []byte("all:\n\tprintenv YAGENT_T\n"), 0o644)
			return []string{bash, "-c", "make -s -C " + dir + "; echo rc=$?"}
		}, denied: true, want: "rc=2"},
		{name: "python os.system", setup: func(t *testing.T) []string {
			return []string{python(t), "-c", "import os; print('rc', os.system('printenv YAGENT_T') >> 8)"}
		}, denied: true, want: "rc 126"},
		{name: "perl exec", setup: func(t *testing.T) []string {
			return []string{need(t, "perl"), "-e", `exec("printenv", "YAGENT_T") or print "rc=failed\n"`}
		}, denied: true, want: "rc=failed"},
		{name: "awk system", setup: func(t *testing.T) []string {
			return []string{need(t, "awk"), `BEGIN { r = system("printenv YAGENT_T"); print "rc=" r }`}
		}, denied: true, want: "rc=126"},
		{name: "shebang", setup: func(t *testing.T) []string {
			s := filepath.Join(dir, "s.sh")
			os.WriteFile(s, []byte("#!"+need(t, "printenv")+"\n"), 0o755)
			return []string{bash, "-c", s + "; echo rc=$?"}
		}, denied: true, want: "rc=126"},
		{name: "env shebang", setup: func(t *testing.T) []string {
			s := filepath.Join(dir, "e.sh")
			os.WriteFile(s, []byte("#!/usr/bin/env printenv\n"), 0o755)
			return []string{bash, "-c", s + " YAGENT_T; echo rc=$?"}
		}, denied: true, want: "rc=126"},
		{name: "loader", setup: func(t *testing.T) []string {
			return []string{bash, "-c", loaderPath(t) + " --inhibit-cache " + need(t, "printenv") + " YAGENT_T; echo rc=$?"}
		}, denied: true, want: "rc=126"},
		{name: "identical copy", setup: func(t *testing.T) []string {
			return []string{bash, "-c", "cp " + need(t, "printenv") + " ./pe && ./pe YAGENT_T; echo rc=$?"}
		}, denied: true, want: "rc=126"},
		{name: "modified copy", setup: func(t *testing.T) []string {
			return []string{bash, "-c", "cp " + need(t, "printenv") + " ./mpe && echo >>./mpe && ./mpe YAGENT_T; echo rc=$?"}
		}, want: "rc=0"},
		{name: "execveat through a descriptor", setup: func(t *testing.T) []string {
			return []string{python(t), "-c", `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
d = os.open("/usr/bin", os.O_RDONLY | os.O_DIRECTORY)
argv = (ctypes.c_char_p * 3)(b"x", b"YAGENT_T", None)
libc.syscall.restype = ctypes.c_long
r = libc.syscall(322 if os.uname().machine == "x86_64" else 281, d, b"printenv", argv, None, 0)
print("rc=failed", ctypes.get_errno())`}
		}, denied: true, want: "rc=failed 13"},
		{name: "memfd", setup: func(t *testing.T) []string {
			return []string{python(t), "-c", `
import os
fd = os.memfd_create("x")
os.write(fd, open("/usr/bin/true", "rb").read())
try:
    os.execve(fd, ["true"], {})
except PermissionError:
    print("rc=denied")`}
		}, denied: true, want: "rc=denied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			argv := c.argv
			if c.setup != nil {
				argv = c.setup(t)
			}
			out := run(t, denying(t, "printenv").judge, dir, argv...)
			if !strings.Contains(out, c.want) {
				t.Errorf("%v: output %q, want %q in it", argv, out, c.want)
			}
			asks := strings.Contains(strings.Join(argv, " "), "YAGENT_T")
			if got := strings.Contains(out, "secret-value"); asks && got == c.denied {
				t.Errorf("%v: printenv ran = %v, want %v; output %q", argv, got, !c.denied, out)
			}
		})
	}
}

// TestIdentify checks what the judge is told about an exec.
func TestIdentify(t *testing.T) {
	needSeccomp(t)
	bash := need(t, "bash")
	printenv := need(t, "printenv")
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	script := filepath.Join(dir, "s.sh")
	os.WriteFile(script, []byte("#! "+printenv+" YAGENT_T\n"), 0o755)
	inner := filepath.Join(dir, "inner.sh")
	os.WriteFile(inner, []byte("#!"+script+"\n"), 0o755)

	t.Run("shebang chain", func(t *testing.T) {
		r := denying(t, "printenv")
		run(t, r.judge, dir, bash, "-c", "./inner.sh a b")
		e, ok := r.find(func(e Exec) bool { return e.Path == inner })
		if !ok {
			t.Fatalf("no exec of %s seen: %+v", inner, r.seen)
		}
		if want := []string{script, printenv}; !slices.Equal(e.Interpreters, want) {
			t.Errorf("Interpreters = %q, want %q", e.Interpreters, want)
		}
		if !slices.Equal(e.Argv, []string{"./inner.sh", "a", "b"}) {
			t.Errorf("Argv = %q", e.Argv)
		}
	})
	t.Run("loader", func(t *testing.T) {
		r := denying(t, "printenv")
		ld := loaderPath(t)
		run(t, r.judge, dir, bash, "-c", ld+" --library-path /nowhere --argv0 x "+printenv+" YAGENT_T")
		e, ok := r.find(func(e Exec) bool { return e.Loader })
		if !ok {
			t.Fatalf("no loader exec seen: %+v", r.seen)
		}
		if e.Path != printenv {
			t.Errorf("Path = %q, want %q", e.Path, printenv)
		}
	})
	t.Run("renamed loader", func(t *testing.T) {
		r := denying(t, "printenv")
		run(t, r.judge, dir, bash, "-c", "cp "+loaderPath(t)+" ./myld && ./myld "+printenv+" YAGENT_T")
		if _, ok := r.find(func(e Exec) bool { return e.Loader && e.Path == printenv }); !ok {
			t.Errorf("the copy of the loader was not recognized: %+v", r.seen)
		}
	})
	t.Run("memfd", func(t *testing.T) {
		r := denying(t, "printenv")
		run(t, r.judge, dir, python(t), "-c", `
import os
fd = os.memfd_create("x")
os.write(fd, open("/usr/bin/true", "rb").read())
os.execve(fd, ["true"], {})`)
		if _, ok := r.find(func(e Exec) bool { return strings.Contains(e.Unidentified, "memfd") }); !ok {
			t.Errorf("the memfd exec was not Unidentified: %+v", r.seen)
		}
	})
	t.Run("deleted", func(t *testing.T) {
		r := denying(t, "printenv")
		run(t, r.judge, dir, python(t), "-c", `
import os, shutil
shutil.copy("/usr/bin/true", "gone")
fd = os.open("gone", os.O_RDONLY)
os.unlink("gone")
try:
    os.execve(fd, ["true"], {})
except PermissionError:
    pass`)
		if _, ok := r.find(func(e Exec) bool { return strings.Contains(e.Unidentified, "deleted") }); !ok {
			t.Errorf("the deleted file's exec was not Unidentified: %+v", r.seen)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		r := denying(t, "printenv")
		out := run(t, r.judge, dir, python(t), "-c", `
import os
try:
    os.execv("/nonexistent/prog", ["x"])
except FileNotFoundError:
    print("rc=enoent")`)
		if !strings.Contains(out, "rc=enoent") {
			t.Errorf("output %q, want the exec to fail with ENOENT", out)
		}
		if _, ok := r.find(func(e Exec) bool { return strings.HasPrefix(e.Path, "/nonexistent") }); ok {
			t.Errorf("an exec of a missing file reached the judge")
		}
	})
	t.Run("long argv", func(t *testing.T) {
		r := denying(t, "printenv")
		run(t, r.judge, dir, python(t), "-c", `
import os
os.execv("/usr/bin/true", ["true"] + ["a" * 100] * 20000)`)
		e, ok := r.find(func(e Exec) bool { return e.Path == "/usr/bin/true" })
		if !ok || !e.Truncated || len(e.Argv) > maxArgs {
			t.Errorf("exec seen %v: Truncated = %v with %d args, want true and at most %d", ok, e.Truncated, len(e.Argv), maxArgs)
		}
	})
}

// TestConcurrentJudges: an exec waiting on its judge does not hold up
// another exec of the tree.
func TestConcurrentJudges(t *testing.T) {
	needSeccomp(t)
	bash := need(t, "bash")
	blocked, release, lsSeen := make(chan struct{}), make(chan struct{}), make(chan struct{})
	judge := func(ctx context.Context, e Exec) Verdict {
		switch filepath.Base(e.Path) {
		case "printenv":
			close(blocked)
			<-release
			return Verdict{Allow: false}
		case "ls":
			close(lsSeen)
		}
		return Verdict{Allow: true}
	}
	go func() {
		select {
		case <-lsSeen:
		case <-time.After(waitBound):
		}
		close(release)
	}()
	out := run(t, judge, t.TempDir(), bash, "-c", "printenv YAGENT_T & sleep 0.01 && ls / >/dev/null; wait $!; echo rc=$?")
	select {
	case <-blocked:
	default:
		t.Fatal("the printenv judge was never asked")
	}
	select {
	case <-lsSeen:
	default:
		t.Fatalf("ls was not judged while printenv waited; output %q", out)
	}
	if !strings.Contains(out, "rc=126") {
		t.Errorf("output %q, want rc=126", out)
	}
}

// TestSuperviseEndsWithTree: Supervise returns once the last process of
// the tree (here a background child that outlives bash) has exited.
func TestSuperviseEndsWithTree(t *testing.T) {
	needSeccomp(t)
	bash := need(t, "bash")
	cmd := exec.Command(bash, "-c", "sleep 0.2 & exit 0")
	f, err := startFiltered(cmd)
	if err != nil {
		t.Fatal(err)
	}
	sup := make(chan error, 1)
	go func() {
		sup <- Supervise(context.Background(), f, Supervision{Judge: func(context.Context, Exec) Verdict { return Verdict{Allow: true} }})
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-sup:
		if err != nil {
			t.Fatalf("Supervise: %v", err)
		}
	case <-time.After(waitBound):
		t.Fatal("Supervise did not return after the tree exited")
	}
}

// TestCancelFailsPending: when ctx ends, an exec waiting on its judge
// fails with EACCES, and Supervise returns.
func TestCancelFailsPending(t *testing.T) {
	needSeccomp(t)
	bash := need(t, "bash")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	judge := func(jctx context.Context, e Exec) Verdict {
		if filepath.Base(e.Path) == "printenv" {
			cancel()
			<-jctx.Done()
			// Allow, once it is too late: the exec must fail all the same.
			return Verdict{Allow: true}
		}
		return Verdict{Allow: true}
	}
	out, err := runCtx(ctx, t, judge, t.TempDir(), bash, "-c", "printenv YAGENT_T; echo rc=$?")
	if err != context.Canceled {
		t.Errorf("Supervise = %v, want context.Canceled", err)
	}
	if !strings.Contains(out, "rc=126") || strings.Contains(out, "secret-value") {
		t.Errorf("output %q, want printenv to fail with rc=126", out)
	}
}

// TestStartUnderGC starts commands while the collector keeps stopping the
// world: cmd.Start's vfork holds a P until the child's exec is answered, so
// an answer that needs the scheduler deadlocks the whole process sooner or
// later (go test's -timeout then fails it).
func TestStartUnderGC(t *testing.T) {
	needSeccomp(t)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	allow := func(context.Context, Exec) Verdict { return Verdict{Allow: true} }
	for range 200 {
		run(t, allow, t.TempDir(), "/usr/bin/true")
	}
}

// TestSuperviseEndsDespiteBlockedJudge: a tree killed while its exec waits
// on a judge that never returns still ends the supervision.
func TestSuperviseEndsDespiteBlockedJudge(t *testing.T) {
	needSeccomp(t)
	bash := need(t, "bash")
	never, asked := make(chan struct{}), make(chan struct{})
	defer close(never)
	judge := func(ctx context.Context, e Exec) Verdict {
		if filepath.Base(e.Path) == "printenv" {
			close(asked)
			<-never // ignores ctx
		}
		return Verdict{Allow: true}
	}
	cmd := exec.Command(bash, "-c", "printenv YAGENT_T")
	f, err := startFiltered(cmd)
	if err != nil {
		t.Fatal(err)
	}
	sup := make(chan error, 1)
	go func() { sup <- Supervise(context.Background(), f, Supervision{Judge: judge}) }()
	select {
	case <-asked:
	case <-time.After(waitBound):
		t.Fatal("the judge was never asked")
	}
	cmd.Process.Kill()
	cmd.Wait()
	select {
	case <-sup:
	case <-time.After(waitBound):
		t.Fatal("Supervise did not return after the tree was killed")
	}
}
