package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/host/surface"
	"github.com/yagent/yagent/sdk"
)

// toolList is the tools/list result the middleware answers with: the
// SDK's ListToolsResult, which the SDK still stamps (result type, the
// server's info in _meta), with its tools in their wire form (listedTool)
// in place of the SDK's Tool. The SDK's ToolAnnotations writes readOnlyHint
// and idempotentHint even when false, MCP's default for both: 23 to 60
// bytes a tool in every listing a model reads, for nothing.
type toolList struct {
	*mcp.ListToolsResult
	// Tools shadows the embedded result's field of the same name.
	Tools []listedTool `json:"tools"`
}

// listedTool is one tool of a tools/list result as the SDK's Tool writes
// it, the fields yagent fills only.
type listedTool struct {
	Annotations *toolHints      `json:"annotations,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Name        string          `json:"name"`
}

// toolHints are the tool annotations yagent gives: a tool that changes
// nothing says so (readOnlyHint); any other tool gives none, and MCP's
// defaults hold (not read-only, may be destructive, not idempotent, open
// world), as they did when it sent readOnlyHint false.
type toolHints struct {
	ReadOnlyHint bool `json:"readOnlyHint,omitempty"`
}

// listTools is the tools/list result of defs.
func listTools(defs []surface.ToolDef) *toolList {
	// The cache fields are required on the wire of the protocols that have
	// them (the SDK fills them only on its own path): a session's listing
	// is its own (what it loaded) and changes as it loads tools: private,
	// and stale at once.
	out := &toolList{
		ListToolsResult: &mcp.ListToolsResult{Cacheable: mcp.Cacheable{TTLMs: 0, CacheScope: "private"}},
		Tools:           make([]listedTool, 0, len(defs)),
	}
	for _, d := range defs {
		t := listedTool{Name: d.Name, Description: d.Description, InputSchema: listedSchema(schemaOf(d))}
		if readOnly(d) {
			t.Annotations = &toolHints{ReadOnlyHint: true}
		}
		out.Tools = append(out.Tools, t)
	}
	return out
}

// schemaOf is d's input schema, an object with no properties when it
// declares none.
func schemaOf(d surface.ToolDef) json.RawMessage {
	if len(d.InputSchema) == 0 {
		return json.RawMessage(`{"type":"object"}`)
	}
	return d.InputSchema
}

// readOnly says whether d changes nothing by its Effect.
func readOnly(d surface.ToolDef) bool {
	return d.Effect == sdk.EffectNone || d.Effect == sdk.EffectFlow || d.Effect == sdk.EffectRead
}

// listedSchema is schema as tools/list gives it, its meaning to a model
// unchanged and its bytes fewer: an object's "additionalProperties":
// false is left out, since the adapter validates every call against the
// tool's own schema, refuses a field it does not declare and names the one
// it most likely means (29 bytes an object, on every tool); and a type of
// ["null", T] is written T (the SDK infers a Go slice as nullable; the
// adapter repairs a null sent for an optional field). Anything it cannot
// read goes out as it came.
func listedSchema(schema json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := writeSchema(&b, schema); err != nil {
		return schema
	}
	return b.Bytes()
}

// schemaMaps are the keywords whose value maps names to schemas;
// schemaValues those whose value is a schema, and schemaLists those whose
// value is a list of schemas. Any other keyword's value (enum, const,
// default, examples, ...) is data, copied as it is.
var (
	schemaMaps   = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}
	schemaValues = map[string]bool{"items": true, "additionalProperties": true, "additionalItems": true, "not": true, "if": true, "then": true, "else": true,
		"contains": true, "propertyNames": true, "unevaluatedItems": true, "unevaluatedProperties": true}
	schemaLists = map[string]bool{"anyOf": true, "oneOf": true, "allOf": true, "prefixItems": true}
)

// writeSchema writes the schema raw (an object, or a boolean schema) to b.
func writeSchema(b *bytes.Buffer, raw json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return json.Compact(b, raw)
	}
	b.WriteByte('{')
	first := true
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if key == "additionalProperties" && string(v) == "false" {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		if err := writeString(b, key); err != nil {
			return err
		}
		b.WriteByte(':')
		switch {
		case key == "type":
			err = writeType(b, v)
		case schemaMaps[key]:
			err = writeSchemaMap(b, v)
		case schemaValues[key]:
			err = writeSchema(b, v)
		case schemaLists[key]:
			err = writeSchemaList(b, v)
		default:
			err = json.Compact(b, v)
		}
		if err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	b.WriteByte('}')
	return nil
}

// writeType writes a type, ["null", T] (in either order) as T.
func writeType(b *bytes.Buffer, raw json.RawMessage) error {
	var types []string
	if json.Unmarshal(raw, &types) == nil && len(types) == 2 && slices.Contains(types, "null") {
		other := types[0]
		if other == "null" {
			other = types[1]
		}
		if other != "null" {
			return writeString(b, other)
		}
	}
	return json.Compact(b, raw)
}

// writeSchemaMap writes an object of name: schema.
func writeSchemaMap(b *bytes.Buffer, raw json.RawMessage) error {
	var m []struct {
		key string
		v   json.RawMessage
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		key, _ := tok.(string)
		m = append(m, struct {
			key string
			v   json.RawMessage
		}{key, v})
	}
	b.WriteByte('{')
	for i, kv := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeString(b, kv.key); err != nil {
			return err
		}
		b.WriteByte(':')
		if err := writeSchema(b, kv.v); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// writeSchemaList writes a list of schemas.
func writeSchemaList(b *bytes.Buffer, raw json.RawMessage) error {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return err
	}
	b.WriteByte('[')
	for i, s := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeSchema(b, s); err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}

// writeString writes s as a JSON string, <, > and & as they are, as the
// SDK's encoder writes them.
func writeString(b *bytes.Buffer, s string) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}
