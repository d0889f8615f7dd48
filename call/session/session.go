package session

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/google/uuid"

	"github.com/yagent/yagent/sdk"
)

// ErrAnswerLater is what an Answerer returns when it does not answer now
// but puts the question to its user by another way (an MCP input request
// that rides the call's result); the call stops without running and is
// retried with the answer.
var ErrAnswerLater = errors.New("the question is put to the user with the call's result")

// Answerer asks the session's user: a TTY prompt for the CLI, MCP
// elicitation for clients that support it.
type Answerer interface {
	// Approve asks the user to allow a call the guard flagged.
	Approve(ctx context.Context, req ApprovalPrompt) (ApprovalAnswer, error)
	// Help asks the user a free-form question and returns the answer.
	Help(ctx context.Context, question string) (string, error)
}

// ApprovalPrompt is what the user is asked to approve.
type ApprovalPrompt struct {
	// RequestID pairs the prompt with its answer.
	RequestID string
	Tool      string
	// Reason says what is asked and why.
	Reason string
	// Paths are paths outside the workspace the call wants to touch.
	Paths []string
	// Command is the command line the call wants to run.
	Command string
}

// Approval scopes.
const (
	ScopeOnce    = "once"
	ScopeSession = "session"
	// ScopeAll gives the session a pass for every tool.
	ScopeAll     = "all"
	ScopeProject = "project"
)

// ApprovalAnswer is the user's answer to an ApprovalPrompt.
type ApprovalAnswer struct {
	Approved bool
	// Scope is ScopeOnce (default), ScopeSession, ScopeAll or ScopeProject.
	Scope string
	// Reason is the user's optional word back to the model.
	Reason string
}

// Session is one agent session. The zero value is not usable; call New.
type Session struct {
	id string

	mu       sync.Mutex
	loaded   map[string]struct{}
	granted  map[string]struct{}
	grantAll bool
	approved []string
	answerer Answerer
	client   string
	temp     *sdk.TempFolder
}

// New returns a session named id; "" gets a fresh uuid.
func New(id string) *Session {
	if id == "" {
		id = uuid.NewString()
	}
	return &Session{id: id, loaded: map[string]struct{}{}, granted: map[string]struct{}{}}
}

// ID returns the session's id.
func (s *Session) ID() string { return s.id }

// SetClient names the client the session serves, for the audit trail: an
// MCP client's name and version, "cli" for the command line.
func (s *Session) SetClient(name string) {
	s.mu.Lock()
	s.client = name
	s.mu.Unlock()
}

// SetTemp records the session's own temp folder, which the host makes on
// its first call.
func (s *Session) SetTemp(t *sdk.TempFolder) {
	s.mu.Lock()
	s.temp = t
	s.mu.Unlock()
}

// Temp returns the session's own temp folder, nil before its first call
// or when the host keeps none (or s is nil).
func (s *Session) Temp() *sdk.TempFolder {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.temp
}

// Client returns the name SetClient gave, "" when none.
func (s *Session) Client() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.client
}

// MarkLoaded records that the session has loaded the Cold tool name and
// reports whether it was new.
func (s *Session) MarkLoaded(name string) (newly bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.loaded[name]; ok {
		return false
	}
	s.loaded[name] = struct{}{}
	return true
}

// IsLoaded reports whether the session has loaded name.
func (s *Session) IsLoaded(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.loaded[name]
	return ok
}

// Loaded returns the loaded tool names, sorted.
func (s *Session) Loaded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.loaded))
	for n := range s.loaded {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// SetAnswerer attaches a (nil: detaches the) user-facing answerer.
func (s *Session) SetAnswerer(a Answerer) {
	s.mu.Lock()
	s.answerer = a
	s.mu.Unlock()
}

// Answerer returns the attached answerer, nil when none.
func (s *Session) Answerer() Answerer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.answerer
}

// GrantTool gives the session a pass for the tool name: its calls no longer
// ask the user.
func (s *Session) GrantTool(name string) {
	s.mu.Lock()
	s.granted[name] = struct{}{}
	s.mu.Unlock()
}

// GrantAll gives the session a pass for every tool.
func (s *Session) GrantAll() {
	s.mu.Lock()
	s.grantAll = true
	s.mu.Unlock()
}

// Granted reports whether a session pass covers name.
func (s *Session) Granted(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.grantAll {
		return true
	}
	_, ok := s.granted[name]
	return ok
}

// ApprovePaths records paths outside the workspace the user approved for
// the rest of the session: reads below them no longer ask.
func (s *Session) ApprovePaths(paths ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range paths {
		if p != "" && !slices.Contains(s.approved, p) {
			s.approved = append(s.approved, p)
		}
	}
}

// ApprovedPaths returns the paths approved with ApprovePaths, in order.
func (s *Session) ApprovedPaths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.approved)
}

type ctxKey struct{}

// NewContext returns ctx carrying s, so host-native tools can reach the
// session of the call they serve.
func NewContext(ctx context.Context, s *Session) context.Context {
	return context.WithValue(ctx, ctxKey{}, s)
}

// FromContext returns the session ctx carries, nil when none.
func FromContext(ctx context.Context) *Session {
	s, _ := ctx.Value(ctxKey{}).(*Session)
	return s
}
