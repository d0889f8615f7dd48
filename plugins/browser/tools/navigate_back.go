package tools

import (
	"context"
	_ "embed"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// NavigateBackName is the name of the tool that goes back in history.
const NavigateBackName = "browser_navigate_back"

//go:embed navigate_back.md
var navigateBackDescription string

type noInput struct{}

// NavigateBack returns browser_navigate_back.
func NavigateBack(m *session.Manager) sdk.Tool {
	return sdk.NewTool(spec(NavigateBackName, "Go back a page.", navigateBackDescription, schemaFor[noInput](nil)),
		func(ctx context.Context, _ noInput) (*sdk.Result, error) {
			return m.Do(ctx, func(ctx context.Context, s *session.Session) (*sdk.Result, error) {
				return s.Back(ctx)
			})
		})
}
