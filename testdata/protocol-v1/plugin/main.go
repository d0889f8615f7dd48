// Command yagent-plugin-oldproto is a plugin built against the version-1
// sdk, frozen under ../yagent-v1: the host must keep loading and running
// it while it speaks a newer protocol.
package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/yagent/yagent/sdk"
)

type echoInput struct {
	Text string `json:"text" jsonschema:"The text to echo."`
}

func main() {
	sdk.Serve(sdk.Plugin{Name: "oldproto", Version: "1.0.0", Tools: []sdk.Tool{echoTool()}})
}

// echoTool echoes its text after using each host callback of version 1:
// a progress report and a question, whose answer it quotes, and says what
// network its sandbox granted.
func echoTool() sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        "old_echo",
		Description: "Echo a text back. Returns the text and what the host answered.",
		Effect:      sdk.EffectNone,
		ReadOnly:    true,
	}, func(ctx context.Context, in echoInput) (*sdk.Result, error) {
		text := strings.TrimSpace(in.Text)
		if text == "" {
			return nil, sdk.Errorf(sdk.CodeInvalidInput, "text is empty; give the text to echo")
		}
		sdk.ReportProgress(ctx, "echoing", 1, 2)
		answer := "approved"
		switch resp, err := sdk.HostFrom(ctx).RequestApproval(ctx, sdk.ApprovalRequest{Reason: "may old_echo echo?"}); {
		case err != nil:
			answer = "error: " + err.Error()
		case resp.Unanswered:
			answer = "unanswered"
		case !resp.Approved:
			answer = "refused"
		}
		network := "none"
		if sb := sdk.CallFrom(ctx).Sandbox; sb != nil && sb.Network {
			network = "on"
		}
		return &sdk.Result{Text: fmt.Sprintf("echo: %s; approval: %s; network: %s", text, answer, network)}, nil
	})
}
