package adapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/yagent/yagent/internal/suggest"
)

// schema is a tool's input schema, compiled once: the validator, and the
// decoded document the repairs and the messages read.
type schema struct {
	compiled *jsonschema.Schema
	doc      map[string]any
}

const schemaURL = "mem:///input.schema.json"

var printer = message.NewPrinter(language.English)

// compileSchema compiles raw (empty: any object). A top-level object schema
// that declares properties but says nothing of others refuses them, so that
// unknown fields are caught even in hand-written plugin schemas.
func compileSchema(raw json.RawMessage) (*schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("input schema is not JSON: %w", err)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("input schema is not a JSON object")
	}
	toCompile := doc
	if _, hasProps := doc["properties"]; hasProps && !composite(doc) {
		if _, set := doc["additionalProperties"]; !set {
			toCompile = make(map[string]any, len(doc)+1)
			for k, v := range doc {
				toCompile[k] = v
			}
			toCompile["additionalProperties"] = false
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{}) // a tool's schema may not make the host read files or URLs
	if err := c.AddResource(schemaURL, toCompile); err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("input schema does not compile: %w", err)
	}
	return &schema{compiled: sch, doc: doc}, nil
}

func composite(doc map[string]any) bool {
	for _, k := range []string{"allOf", "anyOf", "oneOf", "$ref", "patternProperties", "unevaluatedProperties", "if"} {
		if _, ok := doc[k]; ok {
			return true
		}
	}
	return false
}

// declares reports whether the top-level schema declares property name.
func (s *schema) declares(name string) bool {
	_, ok := properties(s.doc)[name]
	return ok
}

// fieldProblem is one thing wrong with the input, at one field.
type fieldProblem struct {
	Field   string `json:"field"`
	Problem string `json:"problem"`
}

func (p fieldProblem) String() string { return p.Field + ": " + p.Problem }

// validate checks args and returns the problems, nil when valid.
func (s *schema) validate(args map[string]any) []fieldProblem {
	err := s.compiled.Validate(args)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []fieldProblem{{Field: "arguments", Problem: err.Error()}}
	}
	var out []fieldProblem
	s.collect(ve, args, &out)
	slices.SortFunc(out, func(a, b fieldProblem) int {
		return strings.Compare(a.String(), b.String())
	})
	return slices.Compact(out)
}

func (s *schema) collect(ve *jsonschema.ValidationError, args map[string]any, out *[]fieldProblem) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			s.collect(c, args, out)
		}
		return
	}
	loc := ve.InstanceLocation
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			*out = append(*out, fieldProblem{fieldPath(append(slices.Clone(loc), m)), "missing"})
		}
	case *kind.Type:
		*out = append(*out, fieldProblem{fieldPath(loc), fmt.Sprintf("must be %s, got %s", wantTypes(k.Want), goType(valueAt(args, loc)))})
	case *kind.AdditionalProperties:
		valid := propertyNames(subschema(s.doc, loc))
		for _, p := range k.Properties {
			msg := "unknown field"
			if c := confusion(p, valid); c != "" {
				msg += fmt.Sprintf(" (did you mean %s? %s is another tool's name for it)", c, p)
			} else if sug := suggest.Close(p, valid); len(sug) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(sug, " or "))
			}
			if len(loc) > 0 {
				msg += "; valid here: " + strings.Join(valid, ", ")
			}
			*out = append(*out, fieldProblem{fieldPath(append(slices.Clone(loc), p)), msg})
		}
	default:
		*out = append(*out, fieldProblem{fieldPath(loc), ve.ErrorKind.LocalizedString(printer)})
	}
}

// validFields describes the top-level fields for a recovery message:
// "summary (string, required)".
func (s *schema) validFields() []string {
	props := properties(s.doc)
	req := required(s.doc)
	var out []string
	for _, name := range propertyNames(s.doc) {
		d := name
		var attrs []string
		if p, ok := props[name].(map[string]any); ok {
			if ts := schemaTypes(p); len(ts) > 0 {
				attrs = append(attrs, strings.Join(ts, " or "))
			}
		}
		if slices.Contains(req, name) {
			attrs = append(attrs, "required")
		}
		if len(attrs) > 0 {
			d += " (" + strings.Join(attrs, ", ") + ")"
		}
		out = append(out, d)
	}
	return out
}

// fieldPath renders an instance location as edits[0].old_string.
func fieldPath(loc []string) string {
	if len(loc) == 0 {
		return "arguments"
	}
	var b strings.Builder
	for i, tok := range loc {
		if _, err := strconv.Atoi(tok); err == nil && i > 0 {
			b.WriteString("[" + tok + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return b.String()
}

func wantTypes(want []string) string {
	parts := make([]string, len(want))
	for i, w := range want {
		parts[i] = article(w) + " " + w
	}
	return strings.Join(parts, " or ")
}

func article(w string) string {
	if w != "" && strings.ContainsRune("aeiou", rune(w[0])) {
		return "an"
	}
	return "a"
}

// goType names the Go type encoding/json decodes v into, the words models
// and their harnesses see in error messages: float64, string, bool.
func goType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case json.Number, float64:
		return "float64"
	case string:
		return "string"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func valueAt(v any, loc []string) any {
	for _, tok := range loc {
		switch c := v.(type) {
		case map[string]any:
			v = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

// subschema follows properties and items from doc along loc.
func subschema(doc map[string]any, loc []string) map[string]any {
	cur := doc
	for _, tok := range loc {
		if p, ok := properties(cur)[tok].(map[string]any); ok {
			cur = p
			continue
		}
		if it, ok := cur["items"].(map[string]any); ok {
			if _, err := strconv.Atoi(tok); err == nil {
				cur = it
				continue
			}
		}
		return nil
	}
	return cur
}

func properties(doc map[string]any) map[string]any {
	p, _ := doc["properties"].(map[string]any)
	return p
}

func propertyNames(doc map[string]any) []string {
	props := properties(doc)
	out := make([]string, 0, len(props))
	for k := range props {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func required(doc map[string]any) []string {
	var out []string
	if r, ok := doc["required"].([]any); ok {
		for _, v := range r {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// schemaTypes returns the "type" keyword as a list.
func schemaTypes(doc map[string]any) []string {
	switch t := doc["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, v := range t {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
