//go:build linux && (amd64 || arm64)

package execwatch

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
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
