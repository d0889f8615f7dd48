package udiff

import "testing"

func TestUnified(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, a, b, want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n",
			"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"insert into empty", "", "x\n",
			"--- a/f\n+++ b/f\n@@ -0,0 +1 @@\n+x\n"},
		{"crlf hidden", "a\r\nb\r\n", "a\r\nc\r\n",
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"},
		{"no newline at end", "a\nb", "a\nc",
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "1\nX\n3\n4\n5\n6\n7\n8\nY\n10\n",
			"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n 1\n-2\n+X\n 3\n@@ -8,3 +8,3 @@\n 8\n-9\n+Y\n 10\n"},
		{"kept lines inside a change", "a\nb\nc\nd\n", "a\nx\nc\ny\n",
			"--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n a\n-b\n+x\n c\n-d\n+y\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			context := 1
			if got := Unified("f", tt.a, tt.b, context); got != tt.want {
				t.Errorf("Unified(%q, %q): got\n%s\nwant\n%s", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	a := []string{"a", "b", "c", "d"}
	b := []string{"a", "x", "c", "d", "e"}
	got := Matches(a, b)
	want := []int{0, -1, 2, 3, -1}
	for j := range want {
		if got[j] != want[j] {
			t.Fatalf("Matches(%q, %q) = %v, want %v", a, b, got, want)
		}
	}
}
