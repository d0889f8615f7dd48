//go:build linux

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk/sandbox/execwatch"
)

// BenchmarkStart compares bash -c true started plainly and under the
// sandbox (every layer, the seccomp filter without a listener; with the
// network namespace in the Offline case; with the listener and its
// supervision, as run_bash has them, in the Reported case).
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
	b.Run("SandboxReported", func(b *testing.B) {
		p, wait := reported(&Policy{Workspace: ws, Network: true, Env: env})
		for b.Loop() {
			runOne(b, p)
			wait()
		}
	})
}

// reported is p with a supervision of its filter's listener, as run_bash
// starts one, and what waits for the supervision to end with the tree.
func reported(p *Policy) (*Policy, func()) {
	done := make(chan struct{}, 1)
	p.Supervise = func(l *os.File, proxy execwatch.Proxy) {
		judge := func(_ context.Context, c execwatch.Connect) execwatch.Verdict {
			return execwatch.Verdict{Allow: p.MayConnectFile(c.Path, c.Dev, c.Ino)}
		}
		go func() {
			execwatch.Supervise(context.Background(), l, execwatch.Supervision{Connect: judge, Proxy: proxy})
			done <- struct{}{}
		}()
	}
	return p, func() { <-done }
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
	withListener, wait := reported(&Policy{Workspace: ws, Network: true, Env: env})
	// The first command of a process builds the rules, the ruleset and the
	// namespaces, and asks go env.
	cold := one(online)
	var plain, sb, off, rep []time.Duration
	for range 400 {
		plain = append(plain, one(nil))
		sb = append(sb, one(online))
		off = append(off, one(offline))
		rep = append(rep, one(withListener))
		wait()
	}
	med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	mp, ms, mo, mr := med(plain), med(sb), med(off), med(rep)
	t.Logf("bash -c true, median of 400: plain %v, sandbox %v (%.2fx), sandbox without network %v (%.2fx), sandbox with the filter's listener supervised %v (%.2fx); first sandboxed command %v",
		mp, ms, float64(ms)/float64(mp), mo, float64(mo)/float64(mp), mr, float64(mr)/float64(mp), cold)
}

// sendmsgScript makes 10,000 sendmsg calls on a socketpair.
const sendmsgScript = `import socket
a, b = socket.socketpair()
for i in range(10000):
    a.sendmsg([b"x"])
    b.recv(1)
`

// BenchmarkSendmsg runs a command that makes 10,000 sendmsg calls on a
// socketpair under the supervised sandbox with the socket rules and
// without them, one after the other in each iteration so the machine's
// noise falls on both; on-ratio is the median with them against without.
// Sends are never trapped: only connect and the making of unix sockets
// go through the filter's argument checks.
func BenchmarkSendmsg(b *testing.B) { benchSocketRules(b, sendmsgScript) }

// connectScript makes 1,000 connects to a unix socket in the workspace.
const connectScript = `import socket, threading
srv = socket.socket(socket.AF_UNIX); srv.bind("s.sock"); srv.listen(64)
def serve():
    for i in range(1000):
        srv.accept()[0].close()
threading.Thread(target=serve).start()
for i in range(1000):
    c = socket.socket(socket.AF_UNIX); c.connect("s.sock"); c.close()
import os; os.unlink("s.sock")
`

// BenchmarkConnect is BenchmarkSendmsg for a command that makes 1,000
// connects to a unix socket in the workspace, each of which the
// supervisor makes under the socket rules.
func BenchmarkConnect(b *testing.B) { benchSocketRules(b, connectScript) }

// benchSocketRules runs the Python script under the supervised sandbox
// with the socket rules and without them, alternately, and reports the
// medians and their ratio.
func benchSocketRules(b *testing.B, script string) {
	py, err := lookPython()
	if err != nil {
		b.Skip(err)
	}
	ws, err := os.MkdirTemp("/var/tmp", "sbbench")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(ws)
	env := os.Environ()
	p, wait := reported(&Policy{Workspace: ws, Network: true, Env: env})
	one := func(off bool) time.Duration {
		socketRulesOff = off
		defer func() { socketRulesOff = false }()
		cmd := exec.Command(py, "-c", script)
		cmd.Dir, cmd.Env = ws, env
		t0 := time.Now()
		st, err := Start(cmd, *p)
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		wait()
		if st.Applied.Sockets == off {
			b.Fatalf("socket rules off %v, applied %v", off, st.Applied.Sockets)
		}
		return d
	}
	var on, off []time.Duration
	for b.Loop() {
		on = append(on, one(false))
		off = append(off, one(true))
	}
	med := func(d []time.Duration) float64 { slices.Sort(d); return float64(d[len(d)/2]) }
	b.ReportMetric(med(on)/1e3, "on-median-µs")
	b.ReportMetric(med(off)/1e3, "off-median-µs")
	b.ReportMetric(med(on)/med(off), "on-ratio")
}
