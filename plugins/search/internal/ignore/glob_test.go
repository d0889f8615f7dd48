package ignore

import (
	"slices"
	"testing"
)

func TestSplitTopLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"", []string{""}},
		{"a", []string{"a"}},
		{"a,b", []string{"a", "b"}},
		{"*.go, *.md", []string{"*.go", " *.md"}},
		{"a,,b,", []string{"a", "", "b", ""}},
		// Braces, nested ones too, hold their commas.
		{"*.{go,md},x", []string{"*.{go,md}", "x"}},
		{"{a,{b,c}},d", []string{"{a,{b,c}}", "d"}},
		{"{a,{b,{c,d}}},{e,f}", []string{"{a,{b,{c,d}}}", "{e,f}"}},
		// Escaped braces and commas are characters.
		{`\{a,b\}`, []string{`\{a`, `b\}`}},
		{`a\,b,c`, []string{`a\,b`, "c"}},
		{`{a\},b},c`, []string{`{a\},b}`, "c"}},
		{`a\\,b`, []string{`a\\`, "b"}},
		// A bracket class holds its commas and braces.
		{"*.[,;],x", []string{"*.[,;]", "x"}},
		{"[!,]x,y", []string{"[!,]x", "y"}},
		{"[],]x,y", []string{"[],]x", "y"}},
		{"{[}],a},b", []string{"{[}],a}", "b"}},
		{"[[:alpha:],]x,y", []string{"[[:alpha:],]x", "y"}},
		// Unbalanced input.
		{"a,{b,c", []string{"a", "{b,c"}},
		{"a},b", []string{"a}", "b"}},
		{"}},a,b", []string{"}}", "a", "b"}},
		{"[a,b", []string{"[a", "b"}},
		{`a,b\`, []string{"a", `b\`}},
	}
	for _, tt := range tests {
		if got := SplitTopLevel(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("SplitTopLevel(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestGlobAlternativesHoldClasses pins that brace alternatives are split
// the same way: a class inside braces keeps its commas and braces.
func TestGlobAlternativesHoldClasses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		glob, path string
		want       bool
	}{
		{"x{[,;],y}", "x,", true},
		{"x{[,;],y}", "x;", true},
		{"x{[,;],y}", "xy", true},
		{"x{[,;],y}", "x[", false},
		{"{[}],a}.txt", "}.txt", true},
		{"{[}],a}.txt", "a.txt", true},
		{"{a,{b,c}}.go", "c.go", true},
		{"{a,}.go", ".go", true},
		{`{a\,b,c}`, "a,b", true},
		{`{a\,b,c}`, "b", false},
	}
	for _, tt := range tests {
		g, err := CompileGlob(tt.glob)
		if err != nil {
			t.Fatalf("CompileGlob(%q): %v", tt.glob, err)
		}
		if got := g.Match(tt.path); got != tt.want {
			t.Errorf("CompileGlob(%q).Match(%q) = %v, want %v", tt.glob, tt.path, got, tt.want)
		}
	}
}
