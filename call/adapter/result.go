package adapter

import (
	"encoding/json"

	"github.com/yagent/yagent/sdk"
)

// Result is the envelope every call returns: text for the model, structured
// data, a code on failure, the repairs applied to the input and whether the
// text was cut.
type Result struct {
	Text string          `json:"text"`
	Data json.RawMessage `json:"data,omitempty"`
	// Code is "" on success, else one of the sdk.Code* words or a tool's own.
	Code      string   `json:"code,omitempty"`
	Repairs   []Repair `json:"repairs,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
	Truncated bool     `json:"truncated,omitempty"`
	// Images go to clients as image content, never into the JSON.
	Images []sdk.Image `json:"-"`
}

// IsError reports whether the call failed.
func (r *Result) IsError() bool { return r != nil && r.Code != "" }

// Repair records one change the host made to a call's input before
// validating it, or one thing a tool did beyond the literal request (a
// plugin's sdk.Note).
type Repair struct {
	Kind   string `json:"kind"`
	Field  string `json:"field,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Repair kinds the host applies.
const (
	// RepairStringifiedArray: "[1,2]" given where an array belongs, parsed.
	RepairStringifiedArray = "stringified_array"
	// RepairBareStringToArray: a lone string given where an array belongs, wrapped.
	RepairBareStringToArray = "bare_string_to_array"
	// RepairNullOptionalOmitted: null given for an optional field, removed.
	RepairNullOptionalOmitted = "null_optional_omitted"
	// RepairSemanticBooleanString: "true" or "42" given where a boolean or a
	// number belongs, converted.
	RepairSemanticBooleanString = "semantic_boolean_string"
	// RepairMarkdownAutolinkPath: "[a.md](http://a.md)" given as a path, unwrapped.
	RepairMarkdownAutolinkPath = "markdown_autolink_path"
	// RepairUnusableInput: the arguments were not a JSON object; they were
	// passed on as {"input": raw}.
	RepairUnusableInput = "unusable_input"
	// RepairDescriptionDropped: an undeclared "description" key, removed.
	RepairDescriptionDropped = "description_dropped"
)

func errorResult(code, text string) *Result {
	return &Result{Code: code, Text: text}
}
