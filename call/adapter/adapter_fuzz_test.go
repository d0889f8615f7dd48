package adapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/sdk"
)

// fuzzSchema is a small input schema with every shape the repairs touch: a
// path, numbers, a boolean, string and integer arrays, a nested object, and
// "input" so that the {"input": raw} fallback can reach the tool.
const fuzzSchema = `{
  "type": "object",
  "properties": {
    "path":  {"type": "string"},
    "count": {"type": "integer"},
    "ratio": {"type": "number"},
    "flag":  {"type": "boolean"},
    "tags":  {"type": "array", "items": {"type": "string"}},
    "ids":   {"type": "array", "items": {"type": "integer"}},
    "opts":  {"type": "object", "properties": {"mode": {"type": "string", "enum": ["a", "b"]}, "depth": {"type": "integer"}}, "additionalProperties": false},
    "input": {"type": "string"}
  },
  "additionalProperties": false
}`

// fuzzMaxText is the text cap of the fuzzed adapter, small so that echoes
// of long inputs are cut.
const fuzzMaxText = 512

// The count values that make the fuzz tool misbehave.
const (
	countEmpty      = 0 // with flag true: an empty result
	countUnencoding = 5 // a result whose data cannot be serialized
	countPanic      = 7
	countToolError  = 13
)

// recorder is an in-process tool that keeps the input it was given.
type recorder struct {
	mu     sync.Mutex
	called bool
	input  json.RawMessage
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.called, r.input = false, nil
}

func (r *recorder) last() (bool, json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.called, r.input
}

func (r *recorder) Execute(_ context.Context, _ sdk.CallInfo, input json.RawMessage, _ func(sdk.Progress)) (*sdk.Result, error) {
	r.mu.Lock()
	r.called, r.input = true, bytes.Clone(input)
	r.mu.Unlock()
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		return nil, fmt.Errorf("the tool got input that is not a JSON object: %w", err)
	}
	count, _ := args["count"].(json.Number)
	switch count.String() {
	case fmt.Sprint(countToolError):
		return nil, sdk.Errorf(sdk.CodeSearchNotFound, "nothing matched %v: try another count", args["path"])
	case fmt.Sprint(countPanic):
		panic("fuzz tool panics on count 7")
	case fmt.Sprint(countUnencoding):
		return &sdk.Result{Data: map[string]any{"f": func() {}}}, nil
	case "", fmt.Sprint(countEmpty):
		if args["flag"] == true {
			return &sdk.Result{}, nil
		}
	}
	return &sdk.Result{Text: "echo " + string(input), Data: args}, nil
}

func newFuzzAdapter(tb testing.TB) (*adapter.Adapter, *recorder) {
	tb.Helper()
	rec := &recorder{}
	spec := sdk.Spec{
		Name:        "fuzz_tool",
		Description: "A tool for fuzzing the call pipeline.",
		InputSchema: json.RawMessage(fuzzSchema),
		Effect:      sdk.EffectRead,
		Roles:       map[string]sdk.Role{"path": sdk.RolePathRead},
	}
	a := adapter.New(spec, "fuzz", toolspec.Warm, rec, adapter.Options{
		Workspace:    tb.TempDir(),
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		MaxTextBytes: fuzzMaxText,
		Trusted:      true,
	})
	if err := a.SchemaError(); err != nil {
		tb.Fatal(err)
	}
	return a, rec
}

// validator compiles fuzzSchema on its own, to check what reaches the tool.
func validator(tb testing.TB) *jsonschema.Schema {
	tb.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(fuzzSchema))
	if err != nil {
		tb.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem:///fuzz.json", doc); err != nil {
		tb.Fatal(err)
	}
	s, err := c.Compile("mem:///fuzz.json")
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// decodeObject decodes raw as one JSON object with numbers kept as
// written; ok is false for anything else.
func decodeObject(raw []byte) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	return m, true
}

// checkEnvelope holds for every call, whatever the input.
func checkEnvelope(t *testing.T, raw []byte, res *adapter.Result, rec *recorder, schema *jsonschema.Schema) {
	t.Helper()
	if res == nil {
		t.Fatalf("Call(%q) returned nil", raw)
	}
	if res.Text == "" && res.Code == "" {
		t.Fatalf("Call(%q): an envelope with neither text nor code: %+v", raw, res)
	}
	if res.Code != "" && strings.TrimSpace(res.Text) == "" {
		t.Fatalf("Call(%q): code %s with no text for the model", raw, res.Code)
	}
	if _, err := json.Marshal(res); err != nil {
		t.Fatalf("Call(%q): the envelope does not serialize: %v", raw, err)
	}
	if res.Truncated && len(res.Text) > fuzzMaxText {
		t.Fatalf("Call(%q): truncated text is %d bytes, over the cap of %d", raw, len(res.Text), fuzzMaxText)
	}
	if len(res.Data) > 0 && !json.Valid(res.Data) {
		t.Fatalf("Call(%q): data is not JSON: %q", raw, res.Data)
	}
	called, input := rec.last()
	if !called {
		if res.Code == "" {
			t.Fatalf("Call(%q) succeeded without running the tool: %+v", raw, res)
		}
		return
	}
	// Whatever reaches the tool is an object its schema accepts.
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
	if err != nil {
		t.Fatalf("Call(%q): the tool got %q, not JSON: %v", raw, input, err)
	}
	if err := schema.Validate(v); err != nil {
		t.Fatalf("Call(%q): the tool got %q, which its schema refuses: %v", raw, input, err)
	}
	if res.Code == "" && utf8.Valid(input) && !utf8.ValidString(res.Text) {
		t.Fatalf("Call(%q): the text of a valid echo is not UTF-8 after capping: %q", raw, res.Text)
	}
}

// FuzzAdapterCall sends random raw input through the whole pipeline of an
// Adapter with an in-process tool: no panic, the envelope always has text
// or a code, only schema-valid objects reach the tool, and an object that
// needed no repair reaches the tool (and comes back in the data) as sent.
//
//	go test -run '^$' -fuzz '^FuzzAdapterCall$' -fuzztime 3m ./call/adapter
func FuzzAdapterCall(f *testing.F) {
	for _, s := range []string{
		``, `null`, `{`, `{"path": "a.txt"`, `"just text"`, `[1, 2]`, `42`, `{} {}`,
		`{"path": "a.txt", "count": 3}`,
		`{"count": "3", "flag": "true", "tags": "one", "ids": "[1, 2]"}`,
		`{"path": "[README.md](http://README.md)", "ratio": "1.5"}`,
		`{"path": null, "count": null, "opts": {"mode": "c"}}`,
		`{"description": "why", "path": "x"}`,
		`{"pth": "x"}`,
		`{"count": 13, "path": "x"}`, `{"count": 7}`, `{"count": 5}`, `{"flag": true}`,
		`{"count": 1e400}`, `{"count": 9007199254740993}`, `{"opts": {"depth": "2", "mode": "a"}}`,
		`{"tags": ["a", "` + strings.Repeat("é", 400) + `"]}`, "{\"path\": \"\xff\xfe\"}",
		"\t{\"path\": \"x\"}\n", `{"input": "raw text"}`, `{"__proto__": 1}`,
	} {
		f.Add([]byte(s))
	}
	a, rec := newFuzzAdapter(f)
	schema := validator(f)
	sess := session.New("fuzz")
	f.Fuzz(func(t *testing.T, raw []byte) {
		rec.reset()
		res := a.Call(context.Background(), sess, raw)
		checkEnvelope(t, raw, res, rec, schema)

		called, input := rec.last()
		sent, isObject := decodeObject(raw)
		if !called {
			return
		}
		if !isObject {
			got, _ := decodeObject(input)
			if _, ok := got["input"].(string); !ok || !hasRepair(res, adapter.RepairUnusableInput) {
				t.Fatalf("Call(%q): unusable input reached the tool as %q (repairs %v), want {\"input\": raw} with the repair recorded", raw, input, res.Repairs)
			}
			return
		}
		if len(res.Repairs) > 0 {
			return
		}
		got, ok := decodeObject(input)
		if !ok || !reflect.DeepEqual(got, sent) {
			t.Fatalf("Call(%q): with no repair recorded, the tool got %q", raw, input)
		}
		if res.Code == "" && len(res.Data) > 0 {
			back, ok := decodeObject(res.Data)
			if !ok || !reflect.DeepEqual(back, sent) {
				t.Fatalf("Call(%q): the echoed data %q differs from the input", raw, res.Data)
			}
		}
	})
}

// FuzzAdapterValidObject builds objects the schema accepts and checks that
// each reaches the tool exactly as sent, with no repair, unless its path is
// a Markdown autolink (repaired, and said so).
//
//	go test -run '^$' -fuzz '^FuzzAdapterValidObject$' -fuzztime 3m ./call/adapter
func FuzzAdapterValidObject(f *testing.F) {
	f.Add("a.txt", int64(3), 1.5, false, "tag", true, int64(2))
	f.Add("[a.md](http://a.md)", int64(-1), 0.0, true, "", false, int64(0))
	f.Add("", int64(1<<53+1), 1e300, true, "[1, 2]", true, int64(-4))
	f.Add("dir/😀 file", int64(0), -0.25, false, "true", false, int64(9))
	a, rec := newFuzzAdapter(f)
	schema := validator(f)
	sess := session.New("fuzz")
	f.Fuzz(func(t *testing.T, path string, count int64, ratio float64, flag bool, tag string, withOpts bool, depth int64) {
		if !utf8.ValidString(path) || !utf8.ValidString(tag) || math.IsNaN(ratio) || math.IsInf(ratio, 0) {
			return // not representable in JSON as given
		}
		switch count {
		case countEmpty, countUnencoding, countPanic, countToolError:
			count += 100 // the tool's misbehaviours are FuzzAdapterCall's business
		}
		obj := map[string]any{"path": path, "count": count, "ratio": ratio, "flag": flag, "tags": []string{tag, tag + "2"}, "ids": []int64{count, depth}}
		if withOpts {
			obj["opts"] = map[string]any{"mode": "b", "depth": depth}
		}
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		rec.reset()
		res := a.Call(context.Background(), sess, raw)
		checkEnvelope(t, raw, res, rec, schema)
		if res.Code != "" {
			t.Fatalf("Call(%s): a valid object failed: %s %s", raw, res.Code, res.Text)
		}
		_, input := rec.last()
		sent, _ := decodeObject(raw)
		got, _ := decodeObject(input)
		if hasRepair(res, adapter.RepairMarkdownAutolinkPath) {
			if got["path"] == path || !strings.Contains(path, "](") {
				t.Fatalf("Call(%s): autolink repair recorded, but the path went from %q to %q", raw, path, got["path"])
			}
			got["path"] = path
		} else if len(res.Repairs) > 0 {
			t.Fatalf("Call(%s): a valid object was repaired: %v", raw, res.Repairs)
		}
		if !reflect.DeepEqual(got, sent) {
			t.Fatalf("Call(%s): the tool got %s", raw, input)
		}
	})
}

func hasRepair(res *adapter.Result, kind string) bool {
	for _, r := range res.Repairs {
		if r.Kind == kind {
			return true
		}
	}
	return false
}
