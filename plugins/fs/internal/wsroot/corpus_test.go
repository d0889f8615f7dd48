package wsroot

import (
	"path/filepath"
	"testing"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/policy/policytest"
)

// TestPathCorpus: the fs plugin opens every path of the shared corpus where
// the host's guard judged it (call/guard runs the same cases); the whole
// tree is approved, so that each path resolves rather than asks.
func TestPathCorpus(t *testing.T) {
	root := policytest.Tree(t)
	t.Setenv("HOME", filepath.Join(root, "home"))
	r, err := New(filepath.Join(root, "ws"), []string{root})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, c := range policytest.PathCases(t, root) {
		got, err := r.Resolve(c.In)
		switch {
		case c.NotDir:
			if err == nil {
				t.Errorf("Resolve(%q) = %q; want it refused, a component is a file", c.In, got.Abs)
			}
		case c.WantErr != "" && err == nil:
			t.Errorf("Resolve(%q) = %s; want it refused (%s)", c.In, got.Abs, c.WantErr)
		case c.WantErr == "" && !policyOutside(root, c.Want) && (err != nil || got.Abs != c.Want):
			t.Errorf("Resolve(%q) = %q, %v; want %q", c.In, got.Abs, err, c.Want)
		case c.WantErr == "" && policyOutside(root, c.Want) && err == nil:
			t.Errorf("Resolve(%q) = %q; want it outside the call's folders", c.In, got.Abs)
		}
	}
}

// policyOutside says want lies outside the corpus's tree, which no call
// of this test approves.
func policyOutside(root, want string) bool { return !policy.Within(root, want, true) }
