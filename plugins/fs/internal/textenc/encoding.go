package textenc

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// Encoding is how a file's text is stored.
type Encoding int

// The encodings the fs tools read and write.
const (
	// UTF8 is UTF-8 without a byte order mark.
	UTF8 Encoding = iota
	// UTF8BOM is UTF-8 behind the EF BB BF mark.
	UTF8BOM
	// UTF16LE is UTF-16 little endian behind the FF FE mark.
	UTF16LE
	// UTF16BE is UTF-16 big endian behind the FE FF mark.
	UTF16BE
	// GB18030 is the Chinese national encoding; chosen only when the whole
	// file decodes cleanly and is not valid UTF-8.
	GB18030
)

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
)

func (e Encoding) String() string {
	switch e {
	case UTF8:
		return "utf-8"
	case UTF8BOM:
		return "utf-8 with BOM"
	case UTF16LE:
		return "utf-16le with BOM"
	case UTF16BE:
		return "utf-16be with BOM"
	case GB18030:
		return "gb18030"
	}
	return fmt.Sprintf("encoding(%d)", int(e))
}

// HasBOM reports whether files in e start with a byte order mark.
func (e Encoding) HasBOM() bool { return e == UTF8BOM || e == UTF16LE || e == UTF16BE }

// BOMLen is the length in bytes of e's byte order mark, 0 when it has none.
func (e Encoding) BOMLen() int {
	switch e {
	case UTF8BOM:
		return 3
	case UTF16LE, UTF16BE:
		return 2
	}
	return 0
}

// ErrBinary is returned for content that holds NUL bytes outside UTF-16.
var ErrBinary = errors.New("binary content (NUL bytes)")

// UndecodableError names the first byte that no supported encoding accepts.
type UndecodableError struct {
	// Offset is the byte offset of the first invalid UTF-8 sequence.
	Offset int
	// Byte is the byte found there.
	Byte byte
	// Line is the 1-based line holding it.
	Line int
}

func (e *UndecodableError) Error() string {
	return fmt.Sprintf("not UTF-8, UTF-16 (with BOM) or GB18030: first undecodable byte 0x%02X at offset %d (line %d)",
		e.Byte, e.Offset, e.Line)
}

// Detect returns the encoding of a whole file's bytes: a BOM decides; else
// valid UTF-8; else GB18030 when every byte decodes cleanly (checked by a
// lossless round trip); else an *UndecodableError. Content holding NUL bytes
// without a UTF-16 BOM is ErrBinary.
func Detect(raw []byte) (Encoding, error) {
	switch {
	case bytes.HasPrefix(raw, bomUTF8):
		if !utf8.Valid(raw[3:]) {
			return 0, undecodable(raw, 3)
		}
		return UTF8BOM, nil
	case bytes.HasPrefix(raw, bomUTF16LE):
		return UTF16LE, nil
	case bytes.HasPrefix(raw, bomUTF16BE):
		return UTF16BE, nil
	}
	if bytes.IndexByte(raw, 0) >= 0 {
		return 0, ErrBinary
	}
	if utf8.Valid(raw) {
		return UTF8, nil
	}
	if gb18030Clean(raw) {
		return GB18030, nil
	}
	return 0, undecodable(raw, 0)
}

func undecodable(raw []byte, from int) error {
	off := from
	for off < len(raw) {
		r, size := utf8.DecodeRune(raw[off:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		off += size
	}
	e := &UndecodableError{Offset: off, Line: 1 + bytes.Count(raw[:min(off, len(raw))], []byte{'\n'})}
	if off < len(raw) {
		e.Byte = raw[off]
	}
	return e
}

// gb18030Clean reports whether raw decodes as GB18030 and encodes back to the
// same bytes: the decoder replaces bad sequences with U+FFFD, which the round
// trip then exposes.
func gb18030Clean(raw []byte) bool {
	dec, err := simplifiedchinese.GB18030.NewDecoder().Bytes(raw)
	if err != nil {
		return false
	}
	enc, err := simplifiedchinese.GB18030.NewEncoder().Bytes(dec)
	if err != nil {
		return false
	}
	return bytes.Equal(enc, raw)
}

// Decode returns raw as UTF-8 text without its byte order mark.
func Decode(raw []byte, enc Encoding) (string, error) {
	switch enc {
	case UTF8:
		return string(raw), nil
	case UTF8BOM:
		return string(bytes.TrimPrefix(raw, bomUTF8)), nil
	case UTF16LE, UTF16BE:
		body := raw[2:]
		if len(body)%2 != 0 {
			return "", fmt.Errorf("utf-16 content has an odd number of bytes (%d)", len(raw))
		}
		u := make([]uint16, len(body)/2)
		for i := range u {
			if enc == UTF16LE {
				u[i] = uint16(body[2*i]) | uint16(body[2*i+1])<<8
			} else {
				u[i] = uint16(body[2*i])<<8 | uint16(body[2*i+1])
			}
		}
		if i := unpairedSurrogate(u); i >= 0 {
			// utf16.Decode would turn it into U+FFFD, and writing the text
			// back would change bytes the edit never touched.
			return "", fmt.Errorf("utf-16 content has an unpaired surrogate 0x%04X at offset %d", u[i], 2+2*i)
		}
		return string(utf16.Decode(u)), nil
	case GB18030:
		b, err := simplifiedchinese.GB18030.NewDecoder().Bytes(raw)
		if err != nil {
			return "", fmt.Errorf("decode gb18030: %w", err)
		}
		return string(b), nil
	}
	return "", fmt.Errorf("unknown encoding %v", enc)
}

// Encode returns text stored in enc, its byte order mark first: the inverse
// of Decode, so a U+FEFF at the start of text is kept as a character after
// the mark (callers writing new content drop a mark the content repeats).
func Encode(text string, enc Encoding) ([]byte, error) {
	switch enc {
	case UTF8:
		return []byte(text), nil
	case UTF8BOM:
		out := make([]byte, 0, len(text)+3)
		return append(append(out, bomUTF8...), text...), nil
	case UTF16LE, UTF16BE:
		u := utf16.Encode([]rune(text))
		out := make([]byte, 2, 2+2*len(u))
		if enc == UTF16LE {
			copy(out, bomUTF16LE)
			for _, c := range u {
				out = append(out, byte(c), byte(c>>8))
			}
		} else {
			copy(out, bomUTF16BE)
			for _, c := range u {
				out = append(out, byte(c>>8), byte(c))
			}
		}
		return out, nil
	case GB18030:
		b, err := simplifiedchinese.GB18030.NewEncoder().Bytes([]byte(text))
		if err != nil {
			return nil, fmt.Errorf("encode gb18030: %w", err)
		}
		// A few private-use characters map to codes that decode as other
		// characters: refuse them rather than write something else.
		if back, err := simplifiedchinese.GB18030.NewDecoder().Bytes(b); err != nil || string(back) != text {
			return nil, fmt.Errorf("encode gb18030: %s cannot be stored in gb18030 unchanged", firstChanged(text, string(back)))
		}
		return b, nil
	}
	return nil, fmt.Errorf("unknown encoding %v", enc)
}

// firstChanged names the first character of text that differs in back.
func firstChanged(text, back string) string {
	for i, r := range text {
		if !strings.HasPrefix(back[min(i, len(back)):], string(r)) {
			return fmt.Sprintf("%U at byte %d", r, i)
		}
	}
	return "the text"
}

// unpairedSurrogate returns the index of the first UTF-16 code unit that is
// a surrogate without its partner, -1 when there is none.
func unpairedSurrogate(u []uint16) int {
	for i := 0; i < len(u); i++ {
		switch c := u[i]; {
		case c >= 0xD800 && c < 0xDC00:
			if i+1 < len(u) && u[i+1] >= 0xDC00 && u[i+1] < 0xE000 {
				i++
				continue
			}
			return i
		case c >= 0xDC00 && c < 0xE000:
			return i
		}
	}
	return -1
}
