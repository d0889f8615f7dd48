package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSandboxSymlinkRace: a workspace link flipped between a workspace
// file and an outside secret while the model reads it: the guard checks
// one target and the reader opens the other. None of 150 reads may show
// the secret, because the kernel resolves the link at the open.
//
// This table runs without -y: under -y the reads the guard sees pointing
// outside are approved, and an approval widens the call's sandbox to what
// it approved; without -y those are asked with nobody to answer, so only
// a flip after the check can leak.
func TestSandboxSymlinkRace(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		tool string
		args map[string]any
	}{
		{name: "cat link", tool: "run_bash", args: map[string]any{"command": "cat link", "timeout_ms": 10000}},
		// The grep tool holds on old code already (it resolves the link
		// itself before ripgrep opens it), so it is left out.
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			secret := e.secret("secret.txt")
			harmless := e.write("plain.txt", "plain words\n")
			link := e.ws("link")
			e.symlink(harmless, link)
			c := e.serve()
			sbFlip(t, link, harmless, filepath.Join(e.outside, "secret.txt"))
			var leaks, ran int
			for i := 0; i < 150; i++ {
				r := c.call(t, tc.tool, tc.args)
				if r.Code == "" {
					ran++
				}
				if strings.Contains(sbText(r), secret) {
					leaks++
				}
			}
			t.Logf("%d of 150 reads ran, %d showed the secret", ran, leaks)
			if leaks > 0 {
				t.Errorf("%d of 150 reads of a flipped link showed the outside secret", leaks)
			}
		})
	}
}

// sbFlip flips link between targets a and b until t ends.
func sbFlip(t *testing.T, link, a, b string) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tmp := link + ".tmp"
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			target := a
			if i%2 == 1 {
				target = b
			}
			// A new link renamed over the old one: the name always exists.
			_ = os.Remove(tmp)
			if os.Symlink(target, tmp) == nil {
				_ = os.Rename(tmp, link)
			}
			time.Sleep(300 * time.Microsecond)
		}
	}()
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
	})
}
