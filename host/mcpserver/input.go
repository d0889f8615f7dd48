package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/yagent/yagent/call/session"
)

// Questions reach the user of an MCP client as input requests (SEP-2322):
// a call that needs an answer ends with an input-required result naming the
// question, the client asks its user and retries the call with the answer,
// and the call runs again from the top with that answer at hand. The SDK
// turns this into a plain elicitation request for clients on older protocol
// versions. The pipeline before execution is deterministic (parse, repair,
// validate, guard), so the retry asks the same question and finds its
// answer; nothing runs before every question is answered.

// inputRequestID names the one question an input-required result carries.
const inputRequestID = "yagent"

// errInputRequired tells the answerer's caller that the question rides the
// call's result instead of being answered now.
var errInputRequired = session.ErrAnswerLater

// pendingTTL bounds how long a question waits for the client's retry.
const pendingTTL = 30 * time.Minute

// maxPending bounds the questions waiting for a retry, per server.
const maxPending = 256

// callState is what one call (and its retries) knows of the user's answers.
type callState struct {
	mu        sync.Mutex
	approvals map[string]session.ApprovalAnswer // by promptKey
	helps     map[string]string                 // by question
	need      *question                         // the question the call stopped on
	created   time.Time
}

type question struct {
	key      string
	approval *session.ApprovalPrompt
	help     string
}

type stateKey struct{}

func newCallState() *callState {
	return &callState{approvals: map[string]session.ApprovalAnswer{}, helps: map[string]string{}, created: time.Now()}
}

func stateFrom(ctx context.Context) *callState {
	st, _ := ctx.Value(stateKey{}).(*callState)
	return st
}

// promptKey identifies an approval question across retries of one call.
func promptKey(p session.ApprovalPrompt) string {
	paths := append([]string(nil), p.Paths...)
	sort.Strings(paths)
	return strings.Join([]string{p.Tool, p.Reason, p.Command, strings.Join(paths, "\x00")}, "\x01")
}

// inputAnswerer is the session answerer of an MCP client that can elicit:
// it answers from the call's state, or records the question and stops the
// call so the question can ride its result.
type inputAnswerer struct{}

func (inputAnswerer) Approve(ctx context.Context, p session.ApprovalPrompt) (session.ApprovalAnswer, error) {
	st := stateFrom(ctx)
	if st == nil {
		return session.ApprovalAnswer{}, errors.New("no MCP call to carry the question")
	}
	key := promptKey(p)
	st.mu.Lock()
	defer st.mu.Unlock()
	if a, ok := st.approvals[key]; ok {
		return a, nil
	}
	if st.need == nil {
		pc := p
		st.need = &question{key: key, approval: &pc}
	}
	return session.ApprovalAnswer{}, errInputRequired
}

func (inputAnswerer) Help(ctx context.Context, q string) (string, error) {
	st := stateFrom(ctx)
	if st == nil {
		return "", errors.New("no MCP call to carry the question")
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if a, ok := st.helps[q]; ok {
		return a, nil
	}
	if st.need == nil {
		st.need = &question{key: q, help: q}
	}
	return "", errInputRequired
}

// pendingCalls keeps the state of calls waiting for their retry, by the
// opaque request state handed to the client.
type pendingCalls struct {
	mu    sync.Mutex
	calls map[string]*callState
}

func (p *pendingCalls) put(st *callState) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := hex.EncodeToString(b)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.calls == nil {
		p.calls = map[string]*callState{}
	}
	for k, c := range p.calls {
		if time.Since(c.created) > pendingTTL {
			delete(p.calls, k)
		}
	}
	if len(p.calls) >= maxPending {
		var oldest string
		for k, c := range p.calls {
			if oldest == "" || c.created.Before(p.calls[oldest].created) {
				oldest = k
			}
		}
		delete(p.calls, oldest)
	}
	p.calls[tok] = st
	return tok
}

func (p *pendingCalls) take(tok string) *callState {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.calls[tok]
	delete(p.calls, tok)
	return st
}

// resume returns the state of a retried call with the user's answer to the
// question it stopped on applied; a fresh state when there is none.
func (p *pendingCalls) resume(params *mcp.CallToolParamsRaw) *callState {
	if params.RequestState == "" {
		return newCallState()
	}
	st := p.take(params.RequestState)
	if st == nil {
		return newCallState()
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	q := st.need
	st.need = nil
	res, ok := params.InputResponses[inputRequestID].(*mcp.ElicitResult)
	if q == nil || !ok || res == nil {
		return st
	}
	if q.approval != nil {
		st.approvals[q.key] = approvalAnswer(res)
	} else if res.Action == "accept" {
		ans, _ := res.Content["answer"].(string)
		st.helps[q.key] = ans
	} else {
		st.helps[q.key] = "(the user did not answer: " + res.Action + ")"
	}
	return st
}

// inputRequired turns the question a call stopped on into its result.
func (p *pendingCalls) inputRequired(st *callState) *mcp.CallToolResult {
	st.mu.Lock()
	q := st.need
	st.mu.Unlock()
	var params *mcp.ElicitParams
	if q.approval != nil {
		params = approvalElicitation(*q.approval)
	} else {
		params = helpElicitation(q.help)
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{inputRequestID: params},
		RequestState:  p.put(st),
	}
}

func approvalElicitation(req session.ApprovalPrompt) *mcp.ElicitParams {
	msg := fmt.Sprintf("yagent: %s wants approval: %s", req.Tool, req.Reason)
	if len(req.Paths) > 0 {
		msg += "\npaths: " + strings.Join(req.Paths, ", ")
	}
	if req.Command != "" {
		msg += "\ncommand: " + req.Command
	}
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: msg,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"scope": map[string]any{
					"type":        "string",
					"enum":        []string{session.ScopeOnce, session.ScopeSession, session.ScopeAll, session.ScopeProject},
					"description": "How long the approval holds: this call, this tool for the session, every tool for the session, or this project from now on",
					"default":     session.ScopeOnce,
				},
				"reason": map[string]any{"type": "string", "description": "Optional word back to the agent"},
			},
		},
	}
}

func approvalAnswer(res *mcp.ElicitResult) session.ApprovalAnswer {
	ans := session.ApprovalAnswer{Approved: res.Action == "accept", Scope: session.ScopeOnce}
	if sc, ok := res.Content["scope"].(string); ok && sc != "" {
		ans.Scope = sc
	}
	if rs, ok := res.Content["reason"].(string); ok {
		ans.Reason = rs
	}
	if !ans.Approved && ans.Reason == "" {
		ans.Reason = "the user declined (" + res.Action + ")"
	}
	return ans
}

func helpElicitation(q string) *mcp.ElicitParams {
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: q,
		RequestedSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"answer": map[string]any{"type": "string"}},
			"required":   []string{"answer"},
		},
	}
}
