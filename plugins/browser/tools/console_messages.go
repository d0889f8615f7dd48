package tools

import (
	"context"
	_ "embed"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// ConsoleMessagesName is the name of the tool that reads the console.
const ConsoleMessagesName = "browser_console_messages"

//go:embed console_messages.md
var consoleMessagesDescription string

// ConsoleMessages returns browser_console_messages.
func ConsoleMessages(m *session.Manager) sdk.Tool {
	return sdk.NewTool(spec(ConsoleMessagesName, "The tab's console messages.", consoleMessagesDescription, schemaFor[noInput](nil)),
		func(ctx context.Context, _ noInput) (*sdk.Result, error) {
			return m.Do(ctx, func(ctx context.Context, s *session.Session) (*sdk.Result, error) {
				return s.ConsoleMessages(ctx)
			})
		})
}
