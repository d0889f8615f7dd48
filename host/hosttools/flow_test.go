package hosttools

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/bus"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/sdk"
)

func newAdapter(spec sdk.Spec, exec adapter.Executor) *adapter.Adapter {
	return adapter.New(spec, toolspec.FamilyHost, toolspec.Hot, exec, adapter.Options{Trusted: true, Logger: slog.New(slog.DiscardHandler)})
}

func exitAdapter(t *testing.T) *adapter.Adapter {
	t.Helper()
	a := newAdapter(AgentExit())
	if err := a.SchemaError(); err != nil {
		t.Fatal(err)
	}
	if a.Name() != toolspec.AgentExit || a.Spec().Effect != sdk.EffectFlow {
		t.Fatalf("spec = %+v, want the registry's agent_exit", a.Spec())
	}
	return a
}

func TestAgentExit_MissingVsWrongType(t *testing.T) {
	t.Parallel()
	a := exitAdapter(t)
	for _, tc := range []struct{ raw, want, notWant string }{
		{`{}`, "summary: missing", "must be a string"},
		{`{"handoff":"h"}`, "summary: missing", "must be a string"},
		{`{"summary":42}`, "summary: must be a string, got float64", "summary: missing"},
		{`{"summary":"done","handoff":7}`, "handoff: must be a string or an object, got float64", "summary:"},
	} {
		res := a.Call(t.Context(), session.New("s"), json.RawMessage(tc.raw))
		if res.Code != sdk.CodeInvalidInput {
			t.Fatalf("Call(%s) = %q, want invalid_input", tc.raw, res.Code)
		}
		if !strings.Contains(res.Text, "- "+tc.want+"\n") || strings.Contains(res.Text, "- "+tc.notWant) {
			t.Errorf("Call(%s) message must say %q and not %q:\n%s", tc.raw, tc.want, tc.notWant, res.Text)
		}
	}
}

// TestAgentExit_EchoesEveryDeclaredKey reads the keys from the schema the
// model sees, not from the list the code uses, so a key declared but not
// echoed goes red.
func TestAgentExit_EchoesEveryDeclaredKey(t *testing.T) {
	t.Parallel()
	a := exitAdapter(t)
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(a.Spec().InputSchema, &schema); err != nil || len(schema.Properties) < 3 {
		t.Fatalf("schema properties = %v (%v); want summary, handoff, blueprint at least", schema.Properties, err)
	}
	for _, shape := range []string{"string", "object"} {
		in := map[string]any{}
		for k := range schema.Properties {
			if shape == "object" && k != "summary" {
				in[k] = map[string]any{"key": "value of " + k, "n": 1}
			} else {
				in[k] = "value of " + k
			}
		}
		raw, _ := json.Marshal(in)
		res := a.Call(t.Context(), session.New("s"), raw)
		if res.IsError() {
			t.Fatalf("Call(%s) = %s: %s", raw, res.Code, res.Text)
		}
		var echo map[string]any
		if err := json.Unmarshal(res.Data, &echo); err != nil {
			t.Fatalf("data %s: %v", res.Data, err)
		}
		for k, want := range in {
			wantJSON, _ := json.Marshal(want)
			gotJSON, _ := json.Marshal(echo[k])
			if string(gotJSON) != string(wantJSON) {
				t.Errorf("%s: echoed %s, want %s", k, gotJSON, wantJSON)
			}
			if !strings.Contains(res.Text, "value of "+k) {
				t.Errorf("text does not show %s:\n%s", k, res.Text)
			}
		}
		if len(echo) != len(schema.Properties) {
			t.Errorf("echo has %d keys, the schema declares %d", len(echo), len(schema.Properties))
		}
	}
}

func TestAgentExit_AbsentOptionalKeysEchoedAsNull(t *testing.T) {
	t.Parallel()
	res := exitAdapter(t).Call(t.Context(), session.New("s"), json.RawMessage(`{"summary":"done"}`))
	if res.IsError() || string(res.Data) != `{"summary":"done","handoff":null,"blueprint":null}` {
		t.Fatalf("Call = %s %s; want every declared key, absent ones null", res.Code, res.Data)
	}
	if !strings.Contains(res.Text, "session stays open") {
		t.Fatalf("text must say the session goes on: %q", res.Text)
	}
}

func TestAgentExit_NullInputEndToEnd(t *testing.T) {
	t.Parallel()
	res := exitAdapter(t).Call(t.Context(), session.New("s"), json.RawMessage(`null`))
	if res.Code != sdk.CodeInvalidInput {
		t.Fatalf("Call(null) = %q %q; want invalid_input, not a crash or a silent exit", res.Code, res.Text)
	}
	var fellBack bool
	for _, r := range res.Repairs {
		fellBack = fellBack || r.Kind == adapter.RepairUnusableInput
	}
	if !fellBack {
		t.Fatalf("repairs %v: null must go through the {\"input\": raw} fallback", res.Repairs)
	}
	for _, want := range []string{"literal null", "input: unknown field", "summary: missing", "summary (string, required)"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("message lacks %q:\n%s", want, res.Text)
		}
	}
}

type answerer struct {
	answer string
	err    error
	asked  []string
}

func (a *answerer) Approve(context.Context, session.ApprovalPrompt) (session.ApprovalAnswer, error) {
	return session.ApprovalAnswer{}, nil
}
func (a *answerer) Help(_ context.Context, q string) (string, error) {
	a.asked = append(a.asked, q)
	return a.answer, a.err
}

func TestAskUserForHelp(t *testing.T) {
	t.Parallel()
	t.Run("no answerer", func(t *testing.T) {
		t.Parallel()
		res := newAdapter(AskUserForHelp(nil, nil)).Call(t.Context(), session.New("s"), json.RawMessage(`{"question":"which db?"}`))
		if res.IsError() || res.Text != NoAnswerer {
			t.Fatalf("Call = %s %q; want a plain result saying nobody can answer", res.Code, res.Text)
		}
	})
	t.Run("answered, on the critical queue", func(t *testing.T) {
		t.Parallel()
		d := bus.New()
		sub := d.Subscribe(4)
		defer sub.Close()
		sess := session.New("s")
		ans := &answerer{answer: "postgres"}
		sess.SetAnswerer(ans)
		res := newAdapter(AskUserForHelp(d, nil)).Call(t.Context(), sess, json.RawMessage(`{"question":"which db?"}`))
		if res.IsError() || !strings.Contains(res.Text, "postgres") || len(ans.asked) != 1 || ans.asked[0] != "which db?" {
			t.Fatalf("Call = %s %q, asked %v", res.Code, res.Text, ans.asked)
		}
		need, resp := <-sub.Critical(), <-sub.Critical()
		if need.Type != bus.UserHelpNeeded || resp.Type != bus.UserHelpResponse || need.RequestID == "" || need.RequestID != resp.RequestID || resp.Payload != "postgres" {
			t.Fatalf("critical events %+v / %+v; want a paired need and response", need, resp)
		}
	})
	t.Run("through the helper", func(t *testing.T) {
		t.Parallel()
		sess := session.New("s")
		sess.SetAnswerer(&answerer{answer: "not asked directly"})
		h := &helper{answer: "sqlite"}
		res := newAdapter(AskUserForHelp(nil, h)).Call(t.Context(), sess, json.RawMessage(`{"question":"which db?"}`))
		if res.IsError() || !strings.Contains(res.Text, "sqlite") || h.sess != sess || h.question != "which db?" {
			t.Fatalf("Call = %s %q; helper saw session %v, question %q", res.Code, res.Text, h.sess, h.question)
		}
	})
	t.Run("answerer fails", func(t *testing.T) {
		t.Parallel()
		sess := session.New("s")
		sess.SetAnswerer(&answerer{err: errors.New("declined")})
		res := newAdapter(AskUserForHelp(nil, nil)).Call(t.Context(), sess, json.RawMessage(`{"question":"q"}`))
		if res.IsError() || !strings.Contains(res.Text, "declined") {
			t.Fatalf("Call = %s %q", res.Code, res.Text)
		}
	})
}

type fakeLoader struct {
	gotNames []string
	gotQuery string
	sess     *session.Session
}

func (f *fakeLoader) LoadTools(sess *session.Session, names []string, query string) Loaded {
	f.gotNames, f.gotQuery, f.sess = names, query, sess
	var tools []LoadedTool
	var unknown []UnknownTool
	for _, n := range names {
		if n == "known" {
			tools = append(tools, LoadedTool{Name: n, Description: "Known tool.", InputSchema: json.RawMessage(`{"type":"object"}`)})
		} else {
			unknown = append(unknown, UnknownTool{Name: n, Suggestions: []string{"known"}})
		}
	}
	return Loaded{Tools: tools, Unknown: unknown}
}

func TestLoadTool(t *testing.T) {
	t.Parallel()
	l := &fakeLoader{}
	spec, exec := LoadTool(l, []CatalogLine{
		{Name: "alpha", Brief: "Does alpha."}, {Name: "beta", Brief: "Does beta."},
		{Name: "g_one", Brief: "One.", Group: "the g family"}, {Name: "g_two", Brief: "Two.", Group: "the g family"},
		{Name: "gamma", Brief: "Does gamma."}, {Name: "h_one", Brief: "H.", Group: "the h family"},
		{Name: "i_x", Group: "the i family"}, {Name: "i_x_y", Group: "the i family"}, {Name: "j_a", Group: "j"}, {Name: "k_b", Group: "j"},
	})
	if !strings.HasSuffix(spec.Description, " Deferred:\nalpha: Does alpha.\nbeta: Does beta.\ng_{one,two}: the g family\ngamma: Does gamma.\nh_one: H."+
		"\ni_{x,x_y}: the i family\nj_a, k_b: j") {
		t.Fatalf("description lacks the catalog:\n%s", spec.Description)
	}
	a := newAdapter(spec, exec)
	sess := session.New("s")
	for _, tc := range []struct {
		raw, code string
		texts     []string
	}{
		{`{"names":["known","knwn"]}`, "", []string{"## known", `No tool named "knwn" (did you mean known?)`, "now loaded"}},
		{`{"names":"known"}`, "", []string{"## known"}}, // a bare string is repaired into a list
		{`{"names":["nope"]}`, sdk.CodeNotFound, []string{`No tool named "nope"`}},
		{`{"query":"zzz"}`, sdk.CodeNotFound, []string{`No deferred tool matches "zzz"`}},
		{`{}`, sdk.CodeInvalidInput, []string{"give names"}},
	} {
		res := a.Call(t.Context(), sess, json.RawMessage(tc.raw))
		if res.Code != tc.code {
			t.Fatalf("Call(%s) = %q %q, want code %q", tc.raw, res.Code, res.Text, tc.code)
		}
		for _, want := range tc.texts {
			if !strings.Contains(res.Text, want) {
				t.Errorf("Call(%s) text lacks %q:\n%s", tc.raw, want, res.Text)
			}
		}
	}
	if l.sess != sess {
		t.Fatal("the loader must get the calling session")
	}
}

type helper struct {
	answer   string
	sess     *session.Session
	question string
}

func (h *helper) Help(_ context.Context, sess *session.Session, _ string, q string) (string, error) {
	h.sess, h.question = sess, q
	return h.answer, nil
}

// TestAgentExit_EchoesValueForValue: the echo is the model's arguments as
// it sent them: numbers not rounded through float64, keys in its order,
// nested objects untouched; a declared key it left out is null, after them.
func TestAgentExit_EchoesValueForValue(t *testing.T) {
	t.Parallel()
	a := exitAdapter(t)
	raw := `{"handoff":{"z":1,"id":12345678901234567890,"a":[1.50,2e3]},"summary":"done"}`
	res := a.Call(t.Context(), session.New("s"), json.RawMessage(raw))
	if res.IsError() {
		t.Fatalf("Call(%s) = %s: %s", raw, res.Code, res.Text)
	}
	want := `{"handoff":{"z":1,"id":12345678901234567890,"a":[1.50,2e3]},"summary":"done","blueprint":null}`
	if string(res.Data) != want {
		t.Errorf("echo = %s\nwant   %s", res.Data, want)
	}
	if !strings.Contains(res.Text, `12345678901234567890`) {
		t.Errorf("the text lost the number:\n%s", res.Text)
	}
}
