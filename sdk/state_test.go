package sdk

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSessionDir(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id, want string
	}{
		{"", "default"},
		{"abc-123_x.y", "abc-123_x.y"},
		{".", "s-"},
		{"..", "s-"},
		{"../../etc", "s-"},
		{"a/b", "s-"},
		{strings.Repeat("a", 65), "s-"},
	} {
		got := SessionDir("/state", tc.id)
		if filepath.Dir(got) != "/state/sessions" {
			t.Errorf("SessionDir(%q) = %q: not one folder under /state/sessions", tc.id, got)
		}
		if base := filepath.Base(got); !strings.HasPrefix(base, tc.want) || (tc.want == "s-" && len(base) != 26) {
			t.Errorf("SessionDir(%q) = %q, want a folder named %q…", tc.id, got, tc.want)
		}
	}
	if SessionDir("/s", "a/b") == SessionDir("/s", "a/c") {
		t.Error("two ids share a folder")
	}
}
