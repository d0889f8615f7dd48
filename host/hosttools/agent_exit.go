package hosttools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/sdk"
)

// exitParam is one parameter of agent_exit.
type exitParam struct {
	name     string
	schema   string
	required bool
}

// exitParams is the one list agent_exit's schema and its echo are both made
// from: a parameter added here is declared and echoed, never one without
// the other.
func exitParams() []exitParam {
	return []exitParam{
		{name: "summary", required: true, schema: `{"type":"string","description":"What was and was not done; what the user must know."}`},
		{name: "handoff", schema: `{"type":["string","object"],"description":"State for who continues."}`},
		{name: "blueprint", schema: `{"type":["string","object"],"description":"A plan for the next phase."}`},
	}
}

// AgentExit returns agent_exit: it echoes every declared argument back,
// verbatim, in the result's data and text. The session goes on; ending it
// is the client's choice.
func AgentExit() (sdk.Spec, adapter.Executor) {
	params := exitParams()
	props := make([]string, len(params))
	var req []string
	for i, p := range params {
		props[i] = fmt.Sprintf("%q:%s", p.name, p.schema)
		if p.required {
			req = append(req, fmt.Sprintf("%q", p.name))
		}
	}
	schema := fmt.Sprintf(`{"type":"object","properties":{%s},"required":[%s],"additionalProperties":false}`,
		strings.Join(props, ","), strings.Join(req, ","))
	spec := bind(toolspec.AgentExit, sdk.Spec{
		Description: "Finish the task: call it once, last. The arguments go back to the client as given.",
		InputSchema: json.RawMessage(schema),
	})
	exec := adapter.ExecutorFunc(func(_ context.Context, _ sdk.CallInfo, input json.RawMessage, _ func(sdk.Progress)) (*sdk.Result, error) {
		keys, got, err := objectFields(input)
		if err != nil {
			return nil, sdk.Errorf(sdk.CodeInvalidInput, "agent_exit arguments are not a JSON object: %v", err)
		}
		var b strings.Builder
		b.WriteString("Exit recorded; the arguments below go back to the client as given. The session stays open: ending it is the client's choice.\n")
		for _, p := range params {
			if v, ok := got[p.name]; ok {
				fmt.Fprintf(&b, "\n%s: %s", p.name, display(v))
			}
		}
		// The echo is the arguments as the model wrote them, in its order,
		// each value's text untouched (never decoded into Go values, which
		// would round a long number); a declared key it left out is null.
		echo := []byte{'{'}
		add := func(k string, v json.RawMessage) {
			if len(echo) > 1 {
				echo = append(echo, ',')
			}
			kb, _ := json.Marshal(k)
			echo = append(append(append(echo, kb...), ':'), v...)
		}
		for _, k := range keys {
			add(k, got[k])
		}
		for _, p := range params {
			if _, ok := got[p.name]; !ok {
				add(p.name, json.RawMessage("null"))
			}
		}
		return &sdk.Result{Text: b.String(), Data: json.RawMessage(append(echo, '}'))}, nil
	})
	return spec, exec
}

// display shows a JSON string as its text and anything else as JSON.
func display(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

func bind(name string, spec sdk.Spec) sdk.Spec {
	st, ok := toolspec.Lookup(name)
	if !ok {
		panic(fmt.Sprintf("hosttools: %s is missing from the static registry", name))
	}
	return st.Bind(spec)
}

// objectFields reads a JSON object's members in their order, each value as
// its raw text.
func objectFields(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil {
		return nil, nil, err
	} else if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("got %v", t)
	}
	var keys []string
	vals := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := vals[k]; !dup {
			keys = append(keys, k)
		}
		vals[k] = v
	}
	return keys, vals, nil
}
