package tools

import (
	"context"
	_ "embed"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// CloseName is the name of the tool that closes the browser.
const CloseName = "browser_close"

//go:embed close.md
var closeDescription string

// Close returns browser_close.
func Close(m *session.Manager) sdk.Tool {
	return sdk.NewTool(spec(CloseName, "Close the browser.", closeDescription, schemaFor[noInput](nil)),
		func(ctx context.Context, _ noInput) (*sdk.Result, error) {
			return m.Close(ctx)
		})
}
