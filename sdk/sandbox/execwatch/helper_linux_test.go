//go:build linux && (amd64 || arm64)

package execwatch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
	"golang.org/x/sys/unix"
)

// waitBound bounds every wait of a test on a real process: past it the test
// fails rather than hangs.
const waitBound = 20 * time.Second

// startFiltered starts cmd the way sandbox.Start does with exec rules: on
// a thread locked for good, with no_new_privs and the exec filter
// installed there. It returns the listener.
func startFiltered(cmd *exec.Cmd) (*os.File, error) {
	return startWith(cmd, Filter{Exec: true})
}

// startWith is startFiltered with the filter f; the listener is nil when f
// has none.
func startWith(cmd *exec.Cmd, flt Filter) (*os.File, error) {
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	RunLocked(func() {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			ch <- result{err: err}
			return
		}
		f, err := InstallFilter(flt)
		if err != nil {
			ch <- result{err: err}
			return
		}
		if err := cmd.Start(); err != nil {
			f.Close()
			ch <- result{err: err}
			return
		}
		ch <- result{f: f}
	})
	r := <-ch
	return r.f, r.err
}

// needSeccomp skips where the kernel has no seccomp user notification.
func needSeccomp(t testing.TB) {
	t.Helper()
	cmd := exec.Command("true")
	f, err := startFiltered(cmd)
	if err != nil {
		t.Skipf("seccomp user notification is missing here (%v): exec rules cannot be held", err)
	}
	cmd.Wait()
	f.Close()
}

func need(t testing.TB, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		t.Skipf("%s is not installed: its case cannot run", tool)
	}
	return p
}

// python is the real interpreter, not a version manager's shim script.
func python(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return need(t, "python3")
}

// ruleProgram is the rule program name as the host would resolve it.
func ruleProgram(t testing.TB, name string) sdk.ExecProgram {
	t.Helper()
	path := need(t, name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return sdk.ExecProgram{Name: name, Files: []sdk.ProgramFile{{Path: path, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}}}
}

// recorder is a judge that denies what matches a rule and keeps every exec
// it saw.
type recorder struct {
	m    *Matcher
	mu   sync.Mutex
	seen []Exec
}

func denying(t testing.TB, names ...string) *recorder {
	var progs []sdk.ExecProgram
	for _, n := range names {
		progs = append(progs, ruleProgram(t, n))
	}
	return &recorder{m: NewMatcher(progs)}
}

func (r *recorder) judge(ctx context.Context, e Exec) Verdict {
	hit := r.m.Match(e)
	e.files = nil
	r.mu.Lock()
	r.seen = append(r.seen, e)
	r.mu.Unlock()
	return Verdict{Allow: len(hit) == 0}
}

// find returns the first exec seen that ok accepts.
func (r *recorder) find(ok func(Exec) bool) (Exec, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.IndexFunc(r.seen, ok)
	if i < 0 {
		return Exec{}, false
	}
	return r.seen[i], true
}

// run runs argv under supervision by judge in dir and returns its output.
// It fails the test unless Supervise returns once the tree has exited.
func run(t testing.TB, judge Judge, dir string, argv ...string) string {
	t.Helper()
	out, err := runCtx(context.Background(), t, judge, dir, argv...)
	if err != nil {
		t.Fatalf("Supervise: %v", err)
	}
	return out
}

func runCtx(ctx context.Context, t testing.TB, judge Judge, dir string, argv ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append(os.Environ(), "YAGENT_T=secret-value")
	f, err := startFiltered(cmd)
	if err != nil {
		t.Fatalf("start %v: %v", argv, err)
	}
	sup := make(chan error, 1)
	go func() { sup <- Supervise(ctx, f, Supervision{Judge: judge}) }()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-time.After(waitBound):
		cmd.Process.Kill()
		t.Fatalf("%v did not end; output so far:\n%s", argv, out.String())
	}
	select {
	case err := <-sup:
		if errors.Is(err, context.Canceled) {
			return out.String(), err
		}
		return out.String(), err
	case <-time.After(waitBound):
		t.Fatalf("Supervise did not return after %v exited", argv)
	}
	return "", nil
}

// loaderPath is the dynamic loader the system's programs name.
func loaderPath(t testing.TB) string {
	t.Helper()
	f, err := elf.Open(need(t, "printenv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			p.ReadAt(b, 0)
			return strings.TrimRight(string(b), "\x00")
		}
	}
	t.Skip("printenv is not dynamically linked: the loader case cannot run")
	return ""
}
