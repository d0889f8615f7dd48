package jsonstr

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// stringSeeds are strings every escape of Append meets, at every
// offset of its eight-byte words.
var stringSeeds = []string{
	"", "plain text of some length, longer than a word", "a\"b\\c", "\x00\x01\x1f\x7f", "\b\f\n\r\t",
	"<html> & 'quotes'", "caf\u00e9 \u2028 \u2029 \u2027 \u202a", "\xff\xfe bad \xc3", "\xe2\x80", "\xed\xa0\x80 surrogate",
	"🙂 four bytes", strings.Repeat("0123456789abcde\n", 8), strings.Repeat("x", 7) + "\"" + strings.Repeat("y", 9),
	strings.Repeat("\u00e9", 5) + strings.Repeat("z", 15) + "\x1b[0m",
	"0123456\x1f89abcdef", "0123456\\89abcdef", "01234567\x7f\x80abcdefgh", "\x20\x21\x22\x23\x5b\x5c\x5d\x7e\x7f",
}

// FuzzAppend: Append quotes every string as encoding/json does with
// HTML escaping off, byte for byte.
func FuzzAppend(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := Append([]byte("prefix"), s); !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("%q:\n got %s\nwant prefix%s", s, got, want)
		}
	})
}
