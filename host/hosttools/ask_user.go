package hosttools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/bus"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/sdk"
)

// NoAnswerer is the text ask_user_for_help returns when the session has
// nobody to ask.
const NoAnswerer = "Nobody is attached to answer questions in this session (no terminal and no client that supports " +
	"elicitation). Decide on your own, pick the most reasonable option, and say in your summary what you assumed."

// Helper puts a free-form question to the user of a session and waits for
// the answer. The authorization loop implements it, so that a question never
// overlaps an approval prompt on the same terminal.
type Helper interface {
	Help(ctx context.Context, sess *session.Session, tool, question string) (string, error)
}

// AskUserForHelp returns ask_user_for_help: the question goes to the
// session's answerer through h (the authorization loop) when given, else
// straight to the answerer, announced on d as user_help_needed and
// user_help_response (the critical queue). With no answerer attached, the
// result says so; it is not an error.
func AskUserForHelp(d *bus.Dispatcher, h Helper) (sdk.Spec, adapter.Executor) {
	spec := bind(toolspec.AskUserForHelp, sdk.Spec{
		Description: "Ask the user one clear question and wait for the answer, when blocked on a decision only they can make.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"}},"required":["question"],"additionalProperties":false}`),
	})
	exec := adapter.ExecutorFunc(func(ctx context.Context, info sdk.CallInfo, input json.RawMessage, _ func(sdk.Progress)) (*sdk.Result, error) {
		var in struct {
			Question string `json:"question"`
		}
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, sdk.Errorf(sdk.CodeInvalidInput, "question must be a string: %v", err)
		}
		sess := session.FromContext(ctx)
		var ans session.Answerer
		if sess != nil {
			ans = sess.Answerer()
		}
		if ans == nil {
			return &sdk.Result{Text: NoAnswerer, Data: map[string]any{"answered": false}}, nil
		}
		var answer string
		var err error
		if h != nil {
			answer, err = h.Help(ctx, sess, info.Tool, in.Question)
		} else {
			ev := bus.Event{SessionID: info.SessionID, CallID: info.ID, RequestID: uuid.NewString(), Tool: info.Tool}
			ev.Type, ev.Payload = bus.UserHelpNeeded, in.Question
			d.Publish(ev)
			answer, err = ans.Help(ctx, in.Question)
			ev.Type, ev.Payload = bus.UserHelpResponse, answer
			d.Publish(ev)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return &sdk.Result{
				Text: fmt.Sprintf("The user could not be asked (%v). Decide on your own and say in your summary what you assumed.", err),
				Data: map[string]any{"answered": false},
			}, nil
		}
		return &sdk.Result{Text: "The user answered: " + answer, Data: map[string]any{"answered": true, "answer": answer}}, nil
	})
	return spec, exec
}
