package tools

import (
	"context"
	_ "embed"
	"strings"

	"github.com/yagent/yagent/sdk"
)

const thinkName = "think"

//go:embed think.md
var thinkDescription string

type thinkInput struct {
	Thought string `json:"thought"`
}

// thinkTool acknowledges a thought and records nothing.
func thinkTool() sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        thinkName,
		Description: thinkDescription,
		Brief:       "Think out loud without acting.",
		Effect:      sdk.EffectNone,
		ReadOnly:    true,
	}, func(ctx context.Context, in thinkInput) (*sdk.Result, error) {
		if strings.TrimSpace(in.Thought) == "" {
			return nil, sdk.Errorf(sdk.CodeInvalidInput, "thought is empty; write your reasoning in the thought field")
		}
		return &sdk.Result{Text: "Thought noted."}, nil
	})
}
