package mcpserver

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
)

// topLevelByDecoder is topLevel as encoding/json's Decoder reads it: the
// oracle of FuzzTopLevel.
func topLevelByDecoder(data []byte) (map[string]json.RawMessage, string) {
	dec := json.NewDecoder(bytes.NewReader(data))
	fields := map[string]json.RawMessage{}
	if _, err := dec.Token(); err != nil {
		return fields, ""
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fields, ""
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return fields, ""
		}
		if _, dup := fields[key]; dup {
			return fields, key
		}
		fields[key] = v
	}
	return fields, ""
}

// parseIDByDecoder is parseID as encoding/json decodes the value.
func parseIDByDecoder(raw []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	switch v := v.(type) {
	case nil:
		return nil, true
	case string:
		return v, true
	case json.Number:
		if n, err := strconv.ParseInt(v.String(), 10, 64); err == nil {
			return n, true
		}
	}
	return nil, false
}

var topLevelSeeds = []string{
	`{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a \"b\" }]"}}}`,
	` { "a" : [1, {"b": "}"}] , "c":null,"d":true,"e":-1.5e3, "f" : "x" } `,
	`{"a":1,"a":2}`,
	`{"a":"x\"y","b\"":"}"}`,
	`{"\u0061":1,"a":2}`,
	`{"k\\":"v\\\\","\ud83d\ude00":"é","":{}}`,
	`{}`,
	`{"id":"a-1","id2":9007199254740993,"x":[[[]]],"y":"\u0000"}`,
}

func FuzzTopLevel(f *testing.F) {
	for _, s := range topLevelSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		if !json.Valid(data) || len(bytes.TrimSpace(data)) == 0 || bytes.TrimSpace(data)[0] != '{' {
			return
		}
		data = bytes.TrimSpace(data)
		got, gotDup := topLevel(data)
		want, wantDup := topLevelByDecoder(data)
		if gotDup != wantDup {
			t.Fatalf("%s: duplicate %q, want %q", data, gotDup, wantDup)
		}
		if wantDup == "" && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %q\nwant %q", data, got, want)
		}
		for _, v := range want {
			gotID, gotErr := parseID(v)
			wantID, ok := parseIDByDecoder(v)
			if (gotErr == nil) != ok || !reflect.DeepEqual(gotID, wantID) {
				t.Fatalf("id %s: got %#v (%v), want %#v (%v)", v, gotID, gotErr, wantID, ok)
			}
			var sv string
			if json.Unmarshal(v, &sv) == nil {
				if got, err := jsonString(v); err != nil || got != sv {
					t.Fatalf("string %s: got %q (%v), want %q", v, got, err, sv)
				}
			}
		}
	})
}

// BenchmarkDecodeFrame judges the line of a read_file call.
func BenchmarkDecodeFrame(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"src/main.go"},"_meta":{"progressToken":41}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, bad := decodeFrame(frame{data: line, size: len(line)}); bad != nil {
			b.Fatal(bad.Message)
		}
	}
}
