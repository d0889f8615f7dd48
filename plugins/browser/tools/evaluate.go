package tools

import (
	"context"
	_ "embed"
	"strings"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// EvaluateName is the name of the tool that runs JavaScript in the page.
const EvaluateName = "browser_evaluate"

//go:embed evaluate.md
var evaluateDescription string

type evaluateInput struct {
	Expression string `json:"expression"`
}

// Evaluate returns browser_evaluate. It always asks the user first: any
// script can read or change what the page holds.
func Evaluate(m *session.Manager) sdk.Tool {
	s := spec(EvaluateName, "Evaluate JavaScript in the page.", evaluateDescription, schemaFor[evaluateInput](nil))
	s.AlwaysAsk = true
	return sdk.NewTool(s, func(ctx context.Context, in evaluateInput) (*sdk.Result, error) {
		if strings.TrimSpace(in.Expression) == "" {
			return nil, sdk.Errorf(sdk.CodeInvalidInput, "expression is empty; give the JavaScript to run, like document.title")
		}
		return m.Do(ctx, func(ctx context.Context, s *session.Session) (*sdk.Result, error) {
			return s.Evaluate(ctx, in.Expression)
		})
	})
}
