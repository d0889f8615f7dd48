package textenc

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRoundTrip: every input that Detect and Decode accept encodes back to
// the same bytes (an edit that leaves a region alone must leave its bytes
// alone); valid text survives every encoding, or is refused (GB18030
// cannot hold a few private-use characters unchanged); the line-ending helpers
// restore a file's single style exactly.
//
//	go test -run '^$' -fuzz '^FuzzRoundTrip$' -fuzztime 3m ./plugins/fs/internal/textenc
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{
		"", "plain\n", "a\r\nb\r\n", "a\rb\r", "a\r\nb\nc\r", "h\xc3\xa9llo\n",
		"\xEF\xBB\xBFbom\r\n", "\xFF\xFEh\x00\xe9\x00\r\x00\n\x00", "\xFE\xFF\x00h\x00\xe9",
		"\xFF\xFE\x3d\xd8\x00\xde", "\xc4\xe3\xba\xc3\r\n", "ok\n\xff\xfe\xfd", "a\x00b",
		"\xFF\xFE\x00\xd8", "\xEF\xBB\xBF\xEF\xBB\xBF", "\xFF\xFE\xFF\xFE", "\x81\x30\x81\x30",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if enc, err := Detect(raw); err == nil {
			if text, err := Decode(raw, enc); err == nil {
				back, err := Encode(text, enc)
				if err != nil {
					t.Fatalf("Encode(Decode(%q, %v)): %v", raw, enc, err)
				}
				if !bytes.Equal(back, raw) {
					t.Fatalf("%v round trip of %q: got %q", enc, raw, back)
				}
				endingsRoundTrip(t, text)
			}
		}
		if !utf8.Valid(raw) {
			return
		}
		text := string(raw)
		endingsRoundTrip(t, text)
		for _, enc := range []Encoding{UTF8, UTF8BOM, UTF16LE, UTF16BE, GB18030} {
			b, err := Encode(text, enc)
			if err != nil {
				if enc == GB18030 && strings.Contains(err.Error(), "cannot be stored in gb18030") {
					continue // refused, not changed: a few private-use characters
				}
				t.Fatalf("Encode(%q, %v): %v", text, enc, err)
			}
			if enc.HasBOM() {
				if got, err := Detect(b); err != nil || got != enc {
					t.Fatalf("Detect(Encode(%q, %v)) = %v, %v", text, enc, got, err)
				}
			}
			got, err := Decode(b, enc)
			if err != nil || got != text {
				t.Fatalf("Decode(Encode(%q, %v)) = %q, %v", text, enc, got, err)
			}
		}
	})
}

// endingsRoundTrip: a text with one line-ending style comes back unchanged
// from Normalize and Apply of that style, and the style agrees with
// IsUniformCRLF.
func endingsRoundTrip(t *testing.T, text string) {
	t.Helper()
	e := CountEndings(text)
	style := e.Style()
	if n := strings.Count(text, "\n") + strings.Count(text, "\r") - strings.Count(text, "\r\n"); e.CRLF+e.LF+e.CR != n {
		t.Fatalf("CountEndings(%q) = %+v, want %d breaks in all", text, e, n)
	}
	if IsUniformCRLF(text) != (style == CRLF) {
		t.Fatalf("IsUniformCRLF(%q) = %v, style %v", text, IsUniformCRLF(text), style)
	}
	norm := Normalize(text)
	if strings.Contains(norm, "\r") {
		t.Fatalf("Normalize(%q) = %q keeps a CR", text, norm)
	}
	switch style {
	case NoEndings, LF, CRLF, CR:
		if got := Apply(norm, style); got != text {
			t.Fatalf("Apply(Normalize(%q), %v) = %q", text, style, got)
		}
	}
	if style == CRLF {
		if got := ToCRLF(ToLF(text)); got != text {
			t.Fatalf("ToCRLF(ToLF(%q)) = %q", text, got)
		}
	}
	if got := CountEndings(ToCRLF(text)); got.LF != 0 {
		t.Fatalf("ToCRLF(%q) leaves %d bare LF", text, got.LF)
	}
}
