//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkStart compares bash -c true started plainly and under the
// sandbox (every layer but the exec filter; with the network namespace in
// the Offline case).
func BenchmarkStart(b *testing.B) {
	ws, err := os.MkdirTemp("/var/tmp", "sbbench")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(ws)
	env := os.Environ()
	runOne := func(b *testing.B, p *Policy) {
		cmd := exec.Command("/bin/bash", "-c", "true")
		cmd.Dir, cmd.Env = ws, env
		if p == nil {
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
		} else if _, err := Start(cmd, *p); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("Plain", func(b *testing.B) {
		for b.Loop() {
			runOne(b, nil)
		}
	})
	b.Run("Sandbox", func(b *testing.B) {
		p := &Policy{Workspace: ws, Network: true, Env: env}
		for b.Loop() {
			runOne(b, p)
		}
	})
	b.Run("SandboxOffline", func(b *testing.B) {
		p := &Policy{Workspace: ws, Env: env}
		for b.Loop() {
			runOne(b, p)
		}
	})
}

// TestStartCost logs the median cost of bash -c true started plainly and
// under the sandbox, interleaved so that the load of the machine falls on
// both alike. YAGENT_MEASURE=1 runs it.
func TestStartCost(t *testing.T) {
	if os.Getenv("YAGENT_MEASURE") == "" {
		t.Skip("a measurement, not a check: YAGENT_MEASURE=1 runs it")
	}
	ws, err := os.MkdirTemp("/var/tmp", "sbbench")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(ws)
	env := os.Environ()
	one := func(p *Policy) time.Duration {
		cmd := exec.Command("/bin/bash", "-c", "true")
		cmd.Dir, cmd.Env = ws, env
		t0 := time.Now()
		if p == nil {
			err = cmd.Start()
		} else {
			_, err = Start(cmd, *p)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		return time.Since(t0)
	}
	online := &Policy{Workspace: ws, Network: true, Env: env}
	offline := &Policy{Workspace: ws, Env: env}
	// The first command of a process builds the rules, the ruleset and the
	// namespaces, and asks go env.
	cold := one(online)
	var plain, sb, off []time.Duration
	for range 400 {
		plain = append(plain, one(nil))
		sb = append(sb, one(online))
		off = append(off, one(offline))
	}
	med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	mp, ms, mo := med(plain), med(sb), med(off)
	t.Logf("bash -c true, median of 400: plain %v, sandbox %v (%.2fx), sandbox without network %v (%.2fx); first sandboxed command %v",
		mp, ms, float64(ms)/float64(mp), mo, float64(mo)/float64(mp), cold)
}
