package grep

import (
	"encoding/json"
	"testing"
)

// fastParse must read what encoding/json reads, escapes included, and
// decline what it does not understand.
func TestFastParse(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{"type":"begin","data":{"path":{"text":"./a b/c.go"}}}`,
		`{"type":"match","data":{"path":{"text":"./x.go"},"lines":{"text":"say \"hi\"\\n\ttab \u00e9 \ud83d\ude00 \u0001\n"},"line_number":42,"absolute_offset":7,"submatches":[]}}`,
		`{"type":"context","data":{"path":{"bytes":"Li9h/2I="},"lines":{"bytes":"Y2Fm6SBhdQo="},"line_number":3,"absolute_offset":0,"submatches":[]}}`,
		`{"type":"end","data":{"path":{"text":"./x.go"},"binary_offset":123,"stats":{}}}`,
		`{"type":"end","data":{"path":{"text":"./x.go"},"binary_offset":null,"stats":{}}}`,
	}
	for _, l := range lines {
		typ, path, text, num, binary, ok := fastParse([]byte(l))
		if !ok {
			t.Errorf("fastParse(%s) declined", l)
			continue
		}
		var m rgMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		wantBinary := len(m.Data.BinaryOffset) > 0 && string(m.Data.BinaryOffset) != "null"
		if typ != m.Type || string(path) != string(m.Data.Path.value()) || string(text) != string(m.Data.Lines.value()) ||
			num != m.Data.LineNumber || binary != wantBinary {
			t.Errorf("fastParse(%s) = %q %q %q %d %v; encoding/json reads %q %q %q %d %v", l, typ, path, text, num, binary,
				m.Type, m.Data.Path.value(), m.Data.Lines.value(), m.Data.LineNumber, wantBinary)
		}
	}
	for _, l := range []string{
		`{"data":{},"type":"match"}`,
		`{"type":"match","data":{"lines":{"text":"x"},"path":{"text":"y"}}}`,
		`{"type":"match","data":{"path":{"text":"bad \q escape"}}}`,
	} {
		if _, _, _, _, _, ok := fastParse([]byte(l)); ok {
			t.Errorf("fastParse(%s) accepted a layout it does not know", l)
		}
	}
}
