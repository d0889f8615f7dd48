//go:build linux && (amd64 || arm64)

package execwatch

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// execsPerRun is how many allowed execs one benchmark run makes.
const execsPerRun = 100

const loop = "for i in $(seq 100); do /usr/bin/true; done"

// BenchmarkExec measures an allowed exec (of /usr/bin/true, judged by a
// matcher holding a printenv rule) with and without supervision; the
// difference of their us/exec is what supervision costs each exec.
func BenchmarkExec(b *testing.B) {
	bash := need(b, "bash")
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command(bash, "-c", loop).Run(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*execsPerRun), "us/exec")
	})
	b.Run("supervised", func(b *testing.B) {
		needSeccomp(b)
		r := denying(b, "printenv")
		judge := func(ctx context.Context, e Exec) Verdict {
			return Verdict{Allow: len(r.m.Match(e)) == 0}
		}
		for b.Loop() {
			cmd := exec.Command(bash, "-c", loop)
			f, err := startFiltered(cmd)
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- Supervise(context.Background(), f, Supervision{Judge: judge}) }()
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*execsPerRun), "us/exec")
	})
}

// BenchmarkStart measures starting and reaping /usr/bin/true with and
// without the filter: the filtered run adds the filter, the primer's answer
// to the first exec and the supervision's start and end.
func BenchmarkStart(b *testing.B) {
	truePath := need(b, "true")
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command(truePath).Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("filtered", func(b *testing.B) {
		needSeccomp(b)
		allow := func(context.Context, Exec) Verdict { return Verdict{Allow: true} }
		for b.Loop() {
			cmd := exec.Command(truePath)
			f, err := startFiltered(cmd)
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- Supervise(context.Background(), f, Supervision{Judge: allow}) }()
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInstall measures what the filter adds to each command's start,
// the command left out: a thread locked for good, given no_new_privs and
// ended (none); the same with the filter the kernel answers alone, as
// children of the search plugin get it (kernel); and with the filter whose
// listener a supervision holds until no thread is left under it, as every
// run_bash command gets it (report).
func BenchmarkInstall(b *testing.B) {
	needSeccomp(b)
	// install ends the thread it installs f on (none when nil) and returns
	// the listener.
	install := func(b *testing.B, f *Filter) *os.File {
		var l *os.File
		var err error
		RunLocked(func() {
			if err = unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err == nil && f != nil {
				l, err = InstallFilter(*f)
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		return l
	}
	b.Run("none", func(b *testing.B) {
		for b.Loop() {
			install(b, nil)
		}
	})
	b.Run("kernel", func(b *testing.B) {
		for b.Loop() {
			install(b, &Filter{})
		}
	})
	b.Run("report", func(b *testing.B) {
		for b.Loop() {
			if err := Supervise(context.Background(), install(b, &Filter{Report: true}), Supervision{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestInstallCost logs the medians of BenchmarkInstall's three cases,
// interleaved so that the load of the machine falls on all alike.
// YAGENT_MEASURE=1 runs it.
func TestInstallCost(t *testing.T) {
	if os.Getenv("YAGENT_MEASURE") == "" {
		t.Skip("a measurement, not a check: YAGENT_MEASURE=1 runs it")
	}
	needSeccomp(t)
	one := func(f *Filter) time.Duration {
		start := time.Now()
		var l *os.File
		var err error
		RunLocked(func() {
			if err = unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err == nil && f != nil {
				l, err = InstallFilter(*f)
			}
		})
		if err == nil && l != nil {
			err = Supervise(context.Background(), l, Supervision{})
		}
		if err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	var none, kernel, report []time.Duration
	for range 1500 {
		none = append(none, one(nil))
		kernel = append(kernel, one(&Filter{}))
		report = append(report, one(&Filter{Report: true}))
	}
	med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	mn, mk, mr := med(none), med(kernel), med(report)
	t.Logf("median of 1500: a thread locked and ended %v; with the filter %v (+%v); with the filter, its listener and their supervision %v (+%v)",
		mn, mk, mk-mn, mr, mr-mn)
}
