package tools

import (
	"context"
	_ "embed"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// TakeScreenshotName is the name of the tool that takes a screenshot.
const TakeScreenshotName = "browser_take_screenshot"

//go:embed take_screenshot.md
var takeScreenshotDescription string

type takeScreenshotInput struct {
	Filename string `json:"filename,omitempty"`
	FullPage bool   `json:"full_page,omitempty"`
}

// TakeScreenshot returns browser_take_screenshot. Whatever path the model
// asks for, the file lands in <workspace>/.yagent/screenshots under a plain
// base name: the browser never writes where the model points.
func TakeScreenshot(m *session.Manager) sdk.Tool {
	return sdk.NewTool(spec(TakeScreenshotName, "Screenshot the page.", takeScreenshotDescription, schemaFor[takeScreenshotInput](nil)),
		func(ctx context.Context, in takeScreenshotInput) (*sdk.Result, error) {
			workspace := sdk.CallFrom(ctx).Workspace
			return m.Do(ctx, func(ctx context.Context, s *session.Session) (*sdk.Result, error) {
				return s.Screenshot(ctx, workspace, in.Filename, in.FullPage)
			})
		})
}
