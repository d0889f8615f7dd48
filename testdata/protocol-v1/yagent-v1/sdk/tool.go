package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Tool is one tool a plugin serves.
//
// Call receives the raw JSON input the host has already repaired and
// validated against the Spec's schema, and a context carrying the CallInfo
// (CallFrom) and the Host (HostFrom). A *ToolError return is a failure the
// model reads; any other error is reported as tool_failed.
type Tool interface {
	Spec() Spec
	Call(ctx context.Context, input json.RawMessage) (*Result, error)
}

// NewTool returns a Tool whose input is decoded into In and whose JSON Schema
// is inferred from In when spec.InputSchema is empty. Struct fields use
// `json` tags for names (omitempty marks a field optional) and
// `jsonschema:"..."` tags for the description the model sees.
//
// The output is turned into a Result: a *Result or Result is used as is, a
// string becomes Text, anything else becomes Data with its JSON as Text.
//
// NewTool panics if the schema cannot be inferred: that is a programming
// error found at start-up, not when a model first calls the tool.
func NewTool[In, Out any](spec Spec, fn func(ctx context.Context, in In) (Out, error)) Tool {
	if len(spec.InputSchema) == 0 {
		schema, err := SchemaFor[In]()
		if err != nil {
			panic(fmt.Sprintf("sdk.NewTool(%q): %v", spec.Name, err))
		}
		spec.InputSchema = schema
	}
	if spec.Effect == "" {
		spec.Effect = EffectNone
	}
	return &typedTool[In, Out]{spec: spec, fn: fn}
}

// SchemaFor infers the JSON Schema of T, with unknown properties refused.
func SchemaFor[T any]() (json.RawMessage, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, err
	}
	if s.Type == "object" && s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	return json.Marshal(s)
}

type typedTool[In, Out any] struct {
	spec Spec
	fn   func(context.Context, In) (Out, error)
}

func (t *typedTool[In, Out]) Spec() Spec { return t.spec }

func (t *typedTool[In, Out]) Call(ctx context.Context, input json.RawMessage) (*Result, error) {
	var in In
	if len(input) > 0 && string(input) != "null" {
		dec := json.NewDecoder(strings.NewReader(string(input)))
		if err := dec.Decode(&in); err != nil {
			return nil, Errorf(CodeInvalidInput, "input for %s does not decode: %v", t.spec.Name, err)
		}
	}
	out, err := t.fn(ctx, in)
	if err != nil {
		return nil, err
	}
	return ToResult(out)
}

// ToResult turns a tool's output value into a Result; see NewTool.
func ToResult(out any) (*Result, error) {
	switch v := out.(type) {
	case *Result:
		if v == nil {
			return &Result{}, nil
		}
		return v, nil
	case Result:
		return &v, nil
	case string:
		return &Result{Text: v}, nil
	case nil:
		return &Result{}, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, Errorf(CodeResultUnencoding, "result of type %T cannot be serialized: %v", out, err)
	}
	return &Result{Text: string(b), Data: json.RawMessage(b)}, nil
}
