package textenc

import (
	"bytes"
	"io"
	"net/http"
	"unicode/utf8"

	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// SniffLen is how many leading bytes Sniff wants to see.
const SniffLen = 8 << 10

// Sniff guesses from the first bytes of a file whether it is text and in
// which encoding, for readers that must not load the whole file. atEOF says
// head is the whole file. It returns binary=true with a MIME type for
// content that is not text.
func Sniff(head []byte, atEOF bool) (enc Encoding, binary bool, mime string) {
	switch {
	case bytes.HasPrefix(head, bomUTF8):
		return UTF8BOM, false, ""
	case bytes.HasPrefix(head, bomUTF16LE):
		return UTF16LE, false, ""
	case bytes.HasPrefix(head, bomUTF16BE):
		return UTF16BE, false, ""
	}
	mime = http.DetectContentType(head)
	if bytes.IndexByte(head, 0) >= 0 {
		return 0, true, mime
	}
	body := head
	if !atEOF {
		body = TrimPartialRune(body)
	}
	if utf8.Valid(body) {
		return UTF8, false, ""
	}
	if !atEOF {
		// A multi-byte GB18030 character may be cut at the end of head.
		for cut := 0; cut < 4 && cut < len(head); cut++ {
			if gb18030Clean(head[:len(head)-cut]) {
				return GB18030, false, ""
			}
		}
	} else if gb18030Clean(head) {
		return GB18030, false, ""
	}
	if controlRatio(head) > 0.1 {
		return 0, true, mime
	}
	// Mostly text with a few stray bytes: show it, bad bytes replaced.
	return UTF8, false, ""
}

// TrimPartialRune drops a UTF-8 sequence cut at the end of b.
func TrimPartialRune(b []byte) []byte {
	for cut := 1; cut <= utf8.UTFMax && cut <= len(b); cut++ {
		if utf8.RuneStart(b[len(b)-cut]) {
			if !utf8.FullRune(b[len(b)-cut:]) {
				return b[:len(b)-cut]
			}
			break
		}
	}
	return b
}

func controlRatio(b []byte) float64 {
	if len(b) == 0 {
		return 0
	}
	n := 0
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\b' && c != 0x1b {
			n++
		}
	}
	return float64(n) / float64(len(b))
}

// NewReader returns a reader of r's content as UTF-8, where r is positioned
// just past enc's byte order mark. UTF-8 passes through untouched.
func NewReader(r io.Reader, enc Encoding) io.Reader {
	switch enc {
	case UTF16LE:
		return transform.NewReader(r, unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewDecoder())
	case UTF16BE:
		return transform.NewReader(r, unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM).NewDecoder())
	case GB18030:
		return transform.NewReader(r, simplifiedchinese.GB18030.NewDecoder())
	}
	return r
}
