//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"testing"
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
