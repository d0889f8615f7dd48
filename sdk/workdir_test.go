package sdk

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRemoveWorkdir: a plugin leaving after its host was killed removes the
// private folder the host made for it, and nothing else: not a folder of
// another name, not one elsewhere, not one that holds anything.
func TestRemoveWorkdir(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	mk := func(parent, name string, files ...string) string {
		dir := filepath.Join(parent, name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, tc := range []struct {
		name string
		dir  string
		want bool
	}{
		{"private and empty", mk(tmp, WorkdirPrefix+"fs-123"), true},
		{"private, not empty", mk(tmp, WorkdirPrefix+"fs-456", "keep"), false},
		{"another name", mk(tmp, "project"), false},
		{"not directly under the temp folder", mk(filepath.Join(tmp, "deep"), WorkdirPrefix+"fs-789"), false},
	} {
		if got := removeWorkdir(tc.dir, tmp); got != tc.want {
			t.Errorf("%s: removeWorkdir(%s) = %v, want %v", tc.name, tc.dir, got, tc.want)
		}
		if _, err := os.Stat(tc.dir); (err == nil) == tc.want {
			t.Errorf("%s: %s exists = %v after removeWorkdir", tc.name, tc.dir, err == nil)
		}
	}
}
