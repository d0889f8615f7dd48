package tools

import (
	"context"
	_ "embed"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// NavigateName is the name of the tool that opens a URL.
const NavigateName = "browser_navigate"

//go:embed navigate.md
var navigateDescription string

type navigateInput struct {
	URL string `json:"url"`
}

// Navigate returns browser_navigate. Its url has the role url: the host's
// guard judges it as it judges web_fetch's (the profile's network grant,
// else ask; schemes other than http and https ask), so every URL that
// reaches the plugin is opened.
func Navigate(m *session.Manager) sdk.Tool {
	s := spec(NavigateName, "Open a URL.", navigateDescription, schemaFor[navigateInput](nil))
	s.Roles = map[string]sdk.Role{"url": sdk.RoleURL}
	return sdk.NewTool(s, func(ctx context.Context, in navigateInput) (*sdk.Result, error) {
		u, err := sentURL(in.URL)
		if err != nil {
			return nil, err
		}
		return m.Do(ctx, func(ctx context.Context, s *session.Session) (*sdk.Result, error) {
			defer reportWaiting(ctx, u+" to load", 0)()
			return s.Navigate(ctx, u)
		})
	})
}
