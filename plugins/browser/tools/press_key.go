package tools

import (
	"context"
	_ "embed"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// PressKeyName is the name of the tool that presses a key.
const PressKeyName = "browser_press_key"

//go:embed press_key.md
var pressKeyDescription string

type pressKeyInput struct {
	Key string `json:"key"`
}

// PressKey returns browser_press_key.
func PressKey(m *session.Manager) sdk.Tool {
	return sdk.NewTool(spec(PressKeyName, "Press a key in the page.", pressKeyDescription, schemaFor[pressKeyInput](nil)),
		func(ctx context.Context, in pressKeyInput) (*sdk.Result, error) {
			return m.Do(ctx, func(ctx context.Context, s *session.Session) (*sdk.Result, error) {
				return s.PressKey(ctx, in.Key)
			})
		})
}
