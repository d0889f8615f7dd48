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
// one target and cat opens the other. None of 150 reads may show the
// secret, because the kernel resolves the link at the open.
//
// This table runs without -y: under -y the reads the guard sees pointing
// outside are approved, and an approval widens the call's sandbox to what
// it approved; without -y those are asked with nobody to answer, so only
// a flip after the check can leak.
func TestSandboxSymlinkRace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	secret := e.secret("secret.txt")
	harmless := e.write("plain.txt", "plain words\n")
	link := e.ws("link")
	e.symlink(harmless, link)
	c := e.serve()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		targets := []string{harmless, filepath.Join(e.outside, "secret.txt")}
		tmp := e.ws(".link.tmp")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// A new link renamed over the old one: the name always exists.
			_ = os.Remove(tmp)
			if os.Symlink(targets[i%2], tmp) == nil {
				_ = os.Rename(tmp, link)
			}
			time.Sleep(300 * time.Microsecond)
		}
	}()
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
	})

	var leaks, ran int
	for i := 0; i < 150; i++ {
		r := sbRun(t, c, "cat link", 10000)
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
}
