package suggest

import (
	"slices"
	"testing"
)

func TestDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"think", "think", 0}, {"thnik", "think", 2}, {"deferd", "deferred", 2}, {"", "abc", 3}, {"héllo", "hello", 1},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	known := []string{"think", "todo_read", "todo_write", "read_file", "write_file"}
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"thnik", []string{"think"}},
		{"read", []string{"read_file", "todo_read"}},
		{"zzzzzz", nil},
		{"think", nil},
	} {
		if got := Close(tc.name, known); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("Close(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestClose_ClosestFirst: a tool's name misspelt, run together, cut short
// or in another case is answered with that name first.
func TestClose_ClosestFirst(t *testing.T) {
	t.Parallel()
	known := []string{"read_file", "write_file", "list_dir", "grep", "run_bash"}
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"read_fil", "read_file"},
		{"readfile", "read_file"},
		{"bash", "run_bash"},
		{"Grep", "grep"},
	} {
		if got := Close(tc.in, known); len(got) == 0 || got[0] != tc.want {
			t.Errorf("Close(%q) = %v, want %q first", tc.in, got, tc.want)
		}
	}
	if got := Close("zzzzzzzz", known); len(got) != 0 {
		t.Errorf("Close(zzzzzzzz) = %v, want none", got)
	}
}

func TestClosest(t *testing.T) {
	t.Parallel()
	keys := []string{"deferred", "deny", "grant", "families"}
	if got := Closest("deferd", keys); got != "deferred" {
		t.Errorf("Closest(deferd) = %q", got)
	}
	if got := Closest("xyzzyx", keys); got != "" {
		t.Errorf("Closest(xyzzyx) = %q, want none", got)
	}
}
