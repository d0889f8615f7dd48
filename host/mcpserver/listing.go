package mcpserver

import (
	"encoding/json"

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
	out := &toolList{ListToolsResult: &mcp.ListToolsResult{}, Tools: make([]listedTool, 0, len(defs))}
	for _, d := range defs {
		t := listedTool{Name: d.Name, Description: d.Description, InputSchema: schemaOf(d)}
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
