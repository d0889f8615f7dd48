package tools

import (
	"context"
	_ "embed"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// TypeName is the name of the tool that types into an element.
const TypeName = "browser_type"

//go:embed type.md
var typeDescription string

type typeInput struct {
	element
	Text   string `json:"text"`
	Submit bool   `json:"submit,omitempty"`
}

// Type returns browser_type.
func Type(m *session.Manager) sdk.Tool {
	return sdk.NewTool(spec(TypeName, "Type text into an element.", typeDescription, schemaFor[typeInput](nil)),
		func(ctx context.Context, in typeInput) (*sdk.Result, error) {
			return m.Do(ctx, func(ctx context.Context, s *session.Session) (*sdk.Result, error) {
				return s.Type(ctx, in.target(), in.Text, in.Submit)
			})
		})
}
