package guard

import (
	"path/filepath"
	"testing"

	"github.com/yagent/yagent/policy/policytest"
)

// TestPathCorpus: the guard judges every path of the shared corpus where
// the fs plugin opens it (plugins/fs/internal/wsroot runs the same cases).
func TestPathCorpus(t *testing.T) {
	t.Parallel()
	root := policytest.Tree(t)
	for _, c := range policytest.PathCases(t, root) {
		got, err := resolveArg(filepath.Join(root, "ws"), filepath.Join(root, "home"), c.In, nil)
		switch {
		case c.WantErr != "" && err == nil:
			t.Errorf("resolveArg(%q) = %s; want it refused (%s)", c.In, got, c.WantErr)
		case c.WantErr == "" && (err != nil || got != c.Want):
			t.Errorf("resolveArg(%q) = %q, %v; want %q", c.In, got, err, c.Want)
		}
	}
}
