package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/yagent/yagent/plugins/browser/chrome"
	"github.com/yagent/yagent/sdk"
)

// Error codes of the browser tools, beside the sdk's.
const (
	// CodeBrowserMissing: no browser binary is installed or configured.
	CodeBrowserMissing = "browser_missing"
	// CodeBrowserCrashed: the browser stopped during the call.
	CodeBrowserCrashed = "browser_crashed"
	// CodeNavigationFailed: the page could not be loaded.
	CodeNavigationFailed = "navigation_failed"
	// CodeScriptError: the page's JavaScript threw.
	CodeScriptError = "script_error"
)

// Manager runs one browser per agent session. Its methods are safe for
// concurrent use; the calls of one session run one at a time.
type Manager struct {
	opts Options

	mu       sync.Mutex
	sessions map[string]*Session
	closed   bool
}

// NewManager returns a Manager; no browser starts before a tool needs one.
// Profile folders left by plugins that were killed are removed.
func NewManager(o Options) *Manager {
	o = o.withDefaults()
	if n := chrome.SweepProfiles(o.ProfileParent); n > 0 {
		o.Logger.Debug("removed profile folders of plugins that are gone", "count", n)
	}
	return &Manager{opts: o, sessions: map[string]*Session{}}
}

// errShutDown fails calls that arrive after Shutdown.
var errShutDown = errors.New("the browser plugin is shutting down")

// acquire returns the session of ctx's call, held for the caller alone
// until it calls release.
func (m *Manager) acquire(ctx context.Context) (*Session, error) {
	s, err := m.session(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// session returns the session of ctx's call, creating it when new.
func (m *Manager) session(ctx context.Context) (*Session, error) {
	id := sdk.CallFrom(ctx).SessionID
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errShutDown
	}
	s := m.sessions[id]
	if s == nil {
		s = newSession(m, id)
		m.sessions[id] = s
	}
	return s, nil
}

// Do runs fn on the browser of ctx's session, starting the browser (and
// reopening the session's saved tabs) when it is not running. After fn, it
// picks up tabs the page opened or closed, saves the tabs, and appends to
// the result what happened on the side: dialogs answered, tabs opened, a
// restart.
func (m *Manager) Do(ctx context.Context, fn func(ctx context.Context, s *Session) (*sdk.Result, error)) (*sdk.Result, error) {
	s, err := m.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release()
	if m.isClosed() {
		return nil, errShutDown
	}
	if err := s.ensure(ctx); err != nil {
		return nil, s.decorateErr(err)
	}
	if m.isClosed() { // Shutdown ran while the browser started
		s.stop()
		return nil, errShutDown
	}
	s.reconcile(ctx)
	res, err := fn(ctx, s)
	if s.running() {
		s.reconcile(ctx)
		s.save(ctx)
	}
	if err != nil {
		return nil, s.decorateErr(s.explain(ctx, err))
	}
	if res == nil {
		res = &sdk.Result{}
	}
	if ev := s.takeEvents(); len(ev) > 0 {
		res.Text = strings.TrimRight(res.Text, "\n") + "\n\n### Events\n" + bullet(ev)
	}
	return res, nil
}

// Close closes the browser of ctx's session and forgets its tabs, so the
// next browser tool starts a fresh browser with one blank tab.
func (m *Manager) Close(ctx context.Context) (*sdk.Result, error) {
	s, err := m.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer s.release()
	was := s.running()
	s.teardown(ctx)
	s.started = false // the next browser is a fresh one, not a restart
	s.events = nil
	rmErr := removeTabs(s.state)
	s.saved = nil
	text := "No browser was open in this session."
	if was {
		text = "Closed the browser and its tabs. The next browser tool starts a new browser with one blank tab."
	}
	if rmErr != nil {
		text += fmt.Sprintf(" (The saved tabs could not be removed: %v.)", rmErr)
	}
	return &sdk.Result{Text: text, Data: map[string]any{"closed": was}}, nil
}

// EndSession closes the browser of session id, if it has one, and forgets
// its tabs, saved ones included: the session is over, nobody will reopen
// them. It waits for the session's call in flight, if any, to return (the
// host cancels it first); when ctx ends before, the browser is killed
// under it. It is the plugin's OnSessionEnd.
func (m *Manager) EndSession(ctx context.Context, id string) error {
	m.mu.Lock()
	s := m.sessions[id]
	delete(m.sessions, id)
	m.mu.Unlock()
	if s == nil {
		return nil
	}
	if err := s.acquire(ctx); err != nil {
		s.teardown(ctx)
		return fmt.Errorf("end session %q: %w", id, err)
	}
	defer s.release()
	s.teardown(ctx)
	if err := removeTabs(s.state); err != nil {
		return fmt.Errorf("end session %q: remove the saved tabs: %w", id, err)
	}
	return nil
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// Shutdown stops every session's browser, killing its process group, and
// refuses later calls. The sessions' saved tabs stay, so a plugin started
// again reopens them. It is the plugin's OnShutdown.
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	sessions := make([]*Session, 0, len(m.sessions))
	for _, s := range m.sessions {
		sessions = append(sessions, s)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Go(func() { s.stop() })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("browser shutdown: %w", ctx.Err())
	}
}

func bullet(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("- ")
		b.WriteString(l)
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
