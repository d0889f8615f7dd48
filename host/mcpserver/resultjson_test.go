package mcpserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stringSeeds are strings every escape meets, at every offset of an
// eight-byte word.
var stringSeeds = []string{
	"", "plain text of some length, longer than a word", "a\"b\\c", "\x00\x01\x1f\x7f", "\b\f\n\r\t",
	"<html> & 'quotes'", "caf\u00e9 \u2028 \u2029", "\xff\xfe bad \xc3", "🙂 four bytes", strings.Repeat("0123456789abcde\n", 8),
	strings.Repeat("x", 7) + "\"" + strings.Repeat("y", 9), "0123456\\89abcdef",
}

// FuzzAppendCallResult: a callResult written by hand reads as
// encoding/json writes it, byte for byte, with every field present or
// absent, text and images, _meta and structured content.
func FuzzAppendCallResult(f *testing.F) {
	for i, s := range stringSeeds {
		f.Add(s, "image/png", []byte(s), uint8(i))
		f.Add(s, "", []byte{}, uint8(0xff-i))
		f.Add(s, "a\"b", []byte(nil), uint8(i*37))
	}
	f.Fuzz(func(t *testing.T, text, mime string, data []byte, shape uint8) {
		r := &callResult{Content: []any{}}
		if shape&1 != 0 {
			r.Content = append(r.Content, textContent{Type: "text", Text: text})
		}
		if shape&2 != 0 {
			r.Content = append(r.Content, imageContent{Type: "image", MIMEType: mime, Data: data})
		}
		if shape&4 != 0 {
			r.Content = append(r.Content, textContent{Type: "text", Text: mime + text})
		}
		if shape&8 != 0 {
			r.Meta = mcp.Meta{"k<>": text, "n": 1}
		} else if text == "" {
			r.Meta = mcp.Meta{} // empty: omitted as nil is
		}
		if shape&16 != 0 {
			r.StructuredContent = map[string]any{"data": json.RawMessage(`{"path":"a<b>.go", "size": 1}`), "text": text}
		}
		r.IsError = shape&32 != 0
		if shape&64 != 0 {
			r.ResultType = "complete"
		}
		if shape&128 != 0 {
			r.Content = append(r.Content, map[string]string{"type": "other", "text": text})
		}
		want, err := appendJSON(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendCallResult(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("shape %08b:\n got %s\nwant %s", shape, got, want)
		}
	})
}
