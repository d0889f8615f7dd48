package tools

import (
	"context"
	_ "embed"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// WaitForName is the name of the tool that waits on the page.
const WaitForName = "browser_wait_for"

//go:embed wait_for.md
var waitForDescription string

// Bounds of browser_wait_for.
const (
	defaultWaitMS = 10_000
	maxWaitMS     = 120_000
	waitPoll      = 100 * time.Millisecond
)

type waitForInput struct {
	Text     string `json:"text,omitempty"`
	TextGone string `json:"text_gone,omitempty"`
	TimeMS   int    `json:"time_ms,omitempty"`
}

// WaitFor returns browser_wait_for.
func WaitFor(m *session.Manager) sdk.Tool {
	schema := schemaFor[waitForInput](func(s *jsonschema.Schema) {
		s.Properties["time_ms"].Minimum, s.Properties["time_ms"].Maximum = bound(0, maxWaitMS)
	})
	return sdk.NewTool(spec(WaitForName, "Wait for text or a time.", waitForDescription, schema),
		func(ctx context.Context, in waitForInput) (*sdk.Result, error) {
			if in.Text == "" && in.TextGone == "" && in.TimeMS <= 0 {
				return nil, sdk.Errorf(sdk.CodeInvalidInput, "say what to wait for: text, text_gone, or time_ms")
			}
			ms := in.TimeMS
			if ms <= 0 {
				ms = defaultWaitMS
			}
			limit := time.Duration(min(ms, maxWaitMS)) * time.Millisecond
			return m.Do(ctx, func(ctx context.Context, s *session.Session) (*sdk.Result, error) {
				defer reportWaiting(ctx, waitingFor(in.Text, in.TextGone, limit), limit)()
				return s.WaitFor(ctx, in.Text, in.TextGone, limit, waitPoll)
			})
		})
}
