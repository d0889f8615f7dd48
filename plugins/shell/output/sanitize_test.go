package output

import (
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain text", "hello\nworld\n", "hello\nworld\n"},
		{"tabs kept", "a\tb", "a\tb"},
		{"crlf", "one\r\ntwo\r\n", "one\ntwo\n"},
		{"progress bar collapses", "10%\r50%\r100%\n", "100%\n"},
		{"trailing cr dropped", "prompt\r", "prompt"},
		{"colours removed", "\x1b[1;31mred\x1b[0m plain", "red plain"},
		{"cursor moves removed", "a\x1b[2K\x1b[1Gb", "ab"},
		{"osc title removed", "\x1b]0;title\x07text", "text"},
		{"osc with st removed", "\x1b]8;;http://x\x1b\\link", "link"},
		{"charset selection removed", "\x1b(Bx", "x"},
		{"backspace edits", "abc\b\bd", "ad"},
		{"backspace stops at line start", "a\n\bb", "a\nb"},
		{"nul escaped", "a\x00b", `a\x00b`},
		{"bell and del escaped", "\x07\x7f", `\x07\x7f`},
		{"invalid utf8 replaced", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"c1 control escaped", "a\u0085b", `a\u0085b`},
		{"multibyte kept", "héllo 世界", "héllo 世界"},
		{"unfinished escape at end", "x\x1b[", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Sanitize([]byte(tt.in))
			if got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzSanitize(f *testing.F) {
	f.Add([]byte("hello\r\n\x1b[31mred\x00\xff"))
	f.Fuzz(func(t *testing.T, in []byte) {
		got := Sanitize(in)
		if !utf8.ValidString(got) {
			t.Fatalf("Sanitize(%q) = %q: not valid UTF-8", in, got)
		}
		for _, r := range got {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				t.Fatalf("Sanitize(%q) = %q: control character %U left in", in, got, r)
			}
		}
	})
}
