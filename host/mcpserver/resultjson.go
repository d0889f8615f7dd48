package mcpserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"

	"github.com/yagent/yagent/internal/jsonstr"
)

// A tools/call result is mostly one string: the text of a file read, a
// command's output, a page. encoding/json escapes a string a byte at a
// time through its tables, about 1.7 ns a byte here: a seventh of the
// lane's whole work for a 4 KiB read_file, and growing with the read.
// appendCallResult writes a callResult by hand, its strings through
// jsonstr.Append, which passes over eight plain bytes at once, and hands
// what it does not write itself (_meta, structured content) to
// encoding/json. Its output is encoding/json's, byte for byte, with HTML
// escaping off as the SDK's JSON-RPC layer encodes
// (FuzzAppendCallResult; jsonstr's FuzzAppend).

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
			b = jsonstr.Append(b, c.Type)
			b = append(b, `,"text":`...)
			b = jsonstr.Append(b, c.Text)
			b = append(b, '}')
		case imageContent:
			b = append(b, `{"type":`...)
			b = jsonstr.Append(b, c.Type)
			b = append(b, `,"mimeType":`...)
			b = jsonstr.Append(b, c.MIMEType)
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
		b = jsonstr.Append(b, r.ResultType)
	}
	return append(b, '}'), nil
}
