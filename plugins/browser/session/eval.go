package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/yagent/yagent/sdk"
)

// maxEvalText caps the model text of an evaluation's result.
const maxEvalText = 64 << 10

// Evaluate runs expression in the current tab's page and returns its value
// as JSON. The expression may be statements (the last one's value is
// returned), may await, and may be a function, which is called.
func (s *Session) Evaluate(ctx context.Context, expression string) (*sdk.Result, error) {
	t := s.current()
	a, cancel := s.bounded(ctx, t.ctx)
	defer cancel()
	defer release(a)
	res, err := chromedp.Call(a, runtime.Evaluate, runtime.EvaluateParams{
		Expression:   expression,
		ObjectGroup:  objectGroup,
		AwaitPromise: ptr(true),
		ReplMode:     ptr(true),
		UserGesture:  ptr(true),
	})
	if err != nil {
		return nil, s.explain(ctx, fmt.Errorf("evaluate: %w", err))
	}
	if res.ExceptionDetails != nil {
		return nil, sdk.Errorf(CodeScriptError, "the expression threw: %s", exceptionText(res.ExceptionDetails))
	}
	obj := res.Result
	if obj != nil && obj.Type == runtime.RemoteObjectTypeFunction {
		call, err := chromedp.Call(a, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: "function() { return this(); }",
			ObjectID:            obj.ObjectID,
			AwaitPromise:        ptr(true),
			UserGesture:         ptr(true),
			ObjectGroup:         objectGroup,
		})
		if err != nil {
			return nil, s.explain(ctx, fmt.Errorf("call the function: %w", err))
		}
		if call.ExceptionDetails != nil {
			return nil, sdk.Errorf(CodeScriptError, "the function threw: %s", exceptionText(call.ExceptionDetails))
		}
		obj = call.Result
	}
	value, text := s.jsonValue(a, obj)
	if len(text) > maxEvalText {
		text = text[:maxEvalText] + fmt.Sprintf("\n… (%d more bytes not shown)", len(text)-maxEvalText)
	}
	return &sdk.Result{Text: text, Data: map[string]any{"result": value}}, nil
}

// jsonValue turns a page value into Go (for Data) and its JSON text; values
// that JSON cannot carry (undefined, NaN, DOM nodes, functions) become their
// description.
func (s *Session) jsonValue(a context.Context, obj *runtime.RemoteObject) (any, string) {
	if obj == nil || obj.Type == runtime.RemoteObjectTypeUndefined {
		return nil, "undefined"
	}
	if obj.UnserializableValue != "" {
		return string(obj.UnserializableValue), string(obj.UnserializableValue)
	}
	raw := []byte(obj.Value)
	if len(raw) == 0 && obj.ObjectID != "" && obj.Type == runtime.RemoteObjectTypeObject && obj.Subtype != runtime.RemoteObjectSubtypeNode {
		res, err := chromedp.Call(a, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: "function() { return this; }",
			ObjectID:            obj.ObjectID,
			ReturnByValue:       ptr(true),
		})
		if err == nil && res.ExceptionDetails == nil && res.Result != nil {
			raw = []byte(res.Result.Value)
		}
	}
	if len(raw) == 0 {
		if obj.Subtype == runtime.RemoteObjectSubtypeNull {
			return nil, "null"
		}
		return remoteString(obj), remoteString(obj)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw), string(raw)
	}
	pretty, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return v, string(raw)
	}
	return v, string(pretty)
}

// WaitFor waits until text appears on the current tab's page, or goneText
// disappears, at most limit; with neither it waits limit. It returns the
// snapshot.
func (s *Session) WaitFor(ctx context.Context, text, goneText string, limit, poll time.Duration) (*sdk.Result, error) {
	t := s.current()
	if text == "" && goneText == "" {
		timer := time.NewTimer(limit)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return nil, contextErr(ctx, "browser_wait_for")
		}
		return s.withChanges(ctx, fmt.Sprintf("Waited %v.", limit), PageInfo{})
	}
	want, _ := json.Marshal(text)
	gone, _ := json.Marshal(goneText)
	expr := fmt.Sprintf(`(() => {
		const body = document.body ? document.body.innerText : '';
		const want = %s, gone = %s;
		return (want === '' || body.includes(want)) && (gone === '' || !body.includes(gone));
	})()`, want, gone)
	deadline := time.Now().Add(limit)
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	for {
		a, cancel := s.bounded(ctx, t.ctx)
		res, err := chromedp.Call(a, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ReturnByValue: ptr(true), Silent: ptr(true)})
		cancel()
		// An evaluation that fails mid-navigation is tried again.
		if err == nil && res.ExceptionDetails == nil && res.Result != nil && string(res.Result.Value) == "true" {
			break
		}
		if err != nil && !s.running() {
			return nil, s.explain(ctx, err)
		}
		if time.Now().After(deadline) {
			var what []string
			if text != "" {
				what = append(what, fmt.Sprintf("%q to appear", text))
			}
			if goneText != "" {
				what = append(what, fmt.Sprintf("%q to disappear", goneText))
			}
			return nil, sdk.Errorf(sdk.CodeTimeout, "waited %v for %s; it did not happen. Call browser_snapshot to see the page", limit, strings.Join(what, " and "))
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return nil, contextErr(ctx, "browser_wait_for")
		}
	}
	var lead string
	switch {
	case text != "" && goneText != "":
		lead = fmt.Sprintf("%q appeared and %q is gone.", text, goneText)
	case text != "":
		lead = fmt.Sprintf("%q appeared.", text)
	default:
		lead = fmt.Sprintf("%q is gone.", goneText)
	}
	return s.withChanges(ctx, lead, PageInfo{})
}

// ConsoleMessages returns the console messages of the current tab.
func (s *Session) ConsoleMessages(ctx context.Context) (*sdk.Result, error) {
	t := s.current()
	msgs, dropped := t.Console()
	var b strings.Builder
	if len(msgs) == 0 {
		b.WriteString("The tab's console has no messages.")
	}
	if dropped > 0 {
		fmt.Fprintf(&b, "(%d older messages were dropped; the newest %d are kept.)\n", dropped, len(msgs))
	}
	for _, m := range msgs {
		fmt.Fprintf(&b, "[%s] %s", m.Level, m.Text)
		if m.Where != "" {
			fmt.Fprintf(&b, " (at %s)", m.Where)
		}
		b.WriteString("\n")
	}
	return &sdk.Result{
		Text: strings.TrimRight(b.String(), "\n"),
		Data: map[string]any{"messages": msgs, "dropped": dropped, "tab": s.cur},
	}, nil
}
