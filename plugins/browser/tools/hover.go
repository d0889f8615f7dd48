package tools

import (
	"context"
	_ "embed"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// HoverName is the name of the tool that hovers over an element.
const HoverName = "browser_hover"

//go:embed hover.md
var hoverDescription string

// Hover returns browser_hover.
func Hover(m *session.Manager) sdk.Tool {
	return sdk.NewTool(spec(HoverName, "Hover over an element.", hoverDescription, schemaFor[element](nil)),
		func(ctx context.Context, in element) (*sdk.Result, error) {
			return m.Do(ctx, func(ctx context.Context, s *session.Session) (*sdk.Result, error) {
				return s.Hover(ctx, in.target())
			})
		})
}
