package tools

import (
	"context"
	_ "embed"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// ClickName is the name of the tool that clicks an element.
const ClickName = "browser_click"

//go:embed click.md
var clickDescription string

type clickInput struct {
	element
	DoubleClick bool `json:"double_click,omitempty"`
}

// Click returns browser_click.
func Click(m *session.Manager) sdk.Tool {
	return sdk.NewTool(spec(ClickName, "Click an element by ref or selector.", clickDescription, schemaFor[clickInput](nil)),
		func(ctx context.Context, in clickInput) (*sdk.Result, error) {
			return m.Do(ctx, func(ctx context.Context, s *session.Session) (*sdk.Result, error) {
				return s.Click(ctx, in.target(), in.DoubleClick)
			})
		})
}
