package tools

import (
	"context"
	_ "embed"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// SelectOptionName is the name of the tool that picks options of a select.
const SelectOptionName = "browser_select_option"

//go:embed select_option.md
var selectOptionDescription string

type selectOptionInput struct {
	element
	Values []string `json:"values"`
}

// SelectOption returns browser_select_option.
func SelectOption(m *session.Manager) sdk.Tool {
	schema := schemaFor[selectOptionInput](func(s *jsonschema.Schema) {
		if p := s.Properties["values"]; p != nil {
			p.Types, p.Type = nil, "array"
		}
	})
	return sdk.NewTool(spec(SelectOptionName, "Select options in a dropdown.", selectOptionDescription, schema),
		func(ctx context.Context, in selectOptionInput) (*sdk.Result, error) {
			return m.Do(ctx, func(ctx context.Context, s *session.Session) (*sdk.Result, error) {
				return s.SelectOption(ctx, in.target(), in.Values)
			})
		})
}
