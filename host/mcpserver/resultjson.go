package mcpserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/bits"
	"unicode/utf8"
)

// A tools/call result is mostly one string: the text of a file read, a
// command's output, a page. encoding/json escapes a string a byte at a
// time through its tables, about 1.7 ns a byte here: a seventh of the
// lane's whole work for a 4 KiB read_file, and growing with the read.
// appendCallResult writes a callResult by hand, its strings through
// appendJSONString, which passes over eight plain bytes at once, and hands
// what it does not write itself (_meta, structured content) to
// encoding/json. Its output is encoding/json's, byte for byte, with HTML
// escaping off as the SDK's JSON-RPC layer encodes
// (FuzzAppendCallResult, FuzzAppendJSONString).

// appendResult appends v's JSON as the SDK's JSON-RPC layer encodes it.
func appendResult(b []byte, v any) ([]byte, error) {
	if r, ok := v.(*callResult); ok {
		return appendCallResult(b, r)
	}
	return appendJSON(b, v)
}

// appendJSON appends v as encoding/json encodes it with HTML escaping off,
// without the line end its Encoder writes.
func appendJSON(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	out := buf.Bytes()
	return out[:len(out)-1], nil
}

// appendCallResult appends r's JSON: its fields in callResult's order,
// each omitted as its tag says.
func appendCallResult(b []byte, r *callResult) ([]byte, error) {
	var err error
	b = append(b, '{')
	if len(r.Meta) > 0 {
		b = append(b, `"_meta":`...)
		if b, err = appendJSON(b, r.Meta); err != nil {
			return b, err
		}
		b = append(b, ',')
	}
	b = append(b, `"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		switch c := c.(type) {
		case textContent:
			b = append(b, `{"type":`...)
			b = appendJSONString(b, c.Type)
			b = append(b, `,"text":`...)
			b = appendJSONString(b, c.Text)
			b = append(b, '}')
		case imageContent:
			b = append(b, `{"type":`...)
			b = appendJSONString(b, c.Type)
			b = append(b, `,"mimeType":`...)
			b = appendJSONString(b, c.MIMEType)
			b = append(b, `,"data":`...)
			if c.Data == nil {
				b = append(b, `null}`...)
				break
			}
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, c.Data)
			b = append(b, `"}`...)
		default:
			if b, err = appendJSON(b, c); err != nil {
				return b, err
			}
		}
	}
	b = append(b, ']')
	if r.StructuredContent != nil {
		b = append(b, `,"structuredContent":`...)
		if b, err = appendJSON(b, r.StructuredContent); err != nil {
			return b, err
		}
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	if r.ResultType != "" {
		b = append(b, `,"resultType":`...)
		b = appendJSONString(b, r.ResultType)
	}
	return append(b, '}'), nil
}

// appendJSONString appends s quoted as encoding/json quotes a string with
// HTML escaping off: '"', '\\' and control characters escaped (\b, \f,
// \n, \r, \t by name, the rest as \u00XX), an invalid UTF-8 byte as
// \ufffd, U+2028 and U+2029 as \u2028 and \u2029, everything else as it is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			m := special8(load8(s[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8 // the first byte that may need work
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// load8 is the first eight bytes of s, the first the lowest (the compiler
// makes it one load, checked once).
func load8(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// special8 marks, with its high bit, each of the eight bytes in w that
// may need escaping or decoding: below 0x20, '"', '\\', or from 0x80. The
// lowest byte marked is one that does (a borrow runs only upward from a
// byte that does); 0 when none does.
func special8(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below20 := (w - 0x20*ones) & ^w & highs
	quote := (w ^ '"'*ones - ones) & ^(w ^ '"'*ones) & highs
	backslash := (w ^ '\\'*ones - ones) & ^(w ^ '\\'*ones) & highs
	return below20 | quote | backslash | w&highs
}
