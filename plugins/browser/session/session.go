package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/yagent/yagent/plugins/browser/chrome"
	"github.com/yagent/yagent/sdk"
)

// Session is the browser of one agent session: one Chromium process, one
// CDP connection, its tabs and the refs of its snapshots.
type Session struct {
	m     *Manager
	id    string
	state string // the tabs file, "" when nothing is kept
	sem   chan struct{}

	// life guards the browser's handles, which Shutdown reads while a call
	// may be running.
	life        sync.Mutex
	rootCtx     context.Context
	rootCancel  context.CancelFunc
	allocCancel context.CancelFunc
	profile     string
	pgid        int
	// proxy is the proxy the browser was started with, "" for none.
	proxy string

	// The fields below belong to the call holding sem.
	tabs     []*Tab
	cur      int
	refs     *refs
	events   []string
	saved    *savedTabs // what the tabs file holds, nil when unknown
	reported bool       // pgid was reported live to the host
	started  bool       // a browser was started once: a stopped one crashed
}

func newSession(m *Manager, id string) *Session {
	return &Session{
		m:     m,
		id:    id,
		state: statePath(m.opts.StateDir, id),
		sem:   make(chan struct{}, 1),
		refs:  newRefs(),
	}
}

func (s *Session) acquire(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return contextErr(ctx, "waiting for the previous browser call of this session")
	}
}

func (s *Session) release() { <-s.sem }

// running reports whether the browser is up.
func (s *Session) running() bool {
	s.life.Lock()
	defer s.life.Unlock()
	return s.rootCtx != nil && s.rootCtx.Err() == nil
}

func (s *Session) event(format string, args ...any) {
	s.events = append(s.events, fmt.Sprintf(format, args...))
}

// takeEvents returns what happened on the side since the last call, the
// dialogs each tab answered included, and forgets it.
func (s *Session) takeEvents() []string {
	ev := s.events
	s.events = nil
	for i, t := range s.tabs {
		for _, r := range t.takeReports() {
			if len(s.tabs) > 1 {
				r = fmt.Sprintf("tab %d: %s", i, r)
			}
			ev = append(ev, r)
		}
	}
	return ev
}

// ensure starts the browser when it is not running, reopening the saved
// tabs. A browser that stopped on its own is cleaned up first; one started
// with another proxy than the call's sandbox names is restarted with it.
func (s *Session) ensure(ctx context.Context) error {
	proxy, err := sdk.CallFrom(ctx).Sandbox.RequestProxy()
	if err != nil {
		return err
	}
	if s.running() {
		s.life.Lock()
		same := s.proxy == proxy
		s.life.Unlock()
		if same {
			return nil
		}
		s.teardown(ctx)
		s.started = false
		s.event("The browser was restarted to reach the network the way this session's sandbox now says.")
	}
	if s.started {
		s.teardown(ctx)
		s.event("The browser had stopped (it crashed or was killed); a new one was started.")
	}
	if err := s.launch(ctx, proxy); err != nil {
		return err
	}
	s.started = true
	s.restore(ctx)
	return nil
}

// launch starts the browser and attaches to its first tab.
func (s *Session) launch(ctx context.Context, proxy string) error {
	o := s.m.opts
	bin, err := chrome.Find(o.Chromium)
	if err != nil {
		return &sdk.ToolError{Code: CodeBrowserMissing, Message: err.Error()}
	}
	profile, err := chrome.NewProfileDir(o.ProfileParent)
	if err != nil {
		return err
	}
	allocOpts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.ModifyCmdFunc(chrome.Prepare),
	}
	for _, arg := range chrome.Args(chrome.Options{UserDataDir: profile, Root: os.Geteuid() == 0, Width: o.Width, Height: o.Height, Proxy: proxy}) {
		name, value := chrome.Flag(arg)
		allocOpts = append(allocOpts, chromedp.Flag(name, value))
	}
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), allocOpts...)
	root := newTab(o.DismissDialogs)
	root.root = true
	logger := o.Logger.Named("chromedp")
	rootCtx, rootCancel := chromedp.NewContext(allocCtx,
		chromedp.WithListener(root.onEvent),
		chromedp.WithLogf(func(f string, a ...any) { logger.Debug(fmt.Sprintf(f, a...)) }),
		chromedp.WithErrorf(func(f string, a ...any) { logger.Warn(fmt.Sprintf(f, a...)) }),
	)
	root.ctx, root.cancel = rootCtx, rootCancel
	if err := s.firstRun(ctx, rootCtx, o.StartTimeout); err != nil {
		rootCancel()
		allocCancel()
		os.RemoveAll(profile)
		return fmt.Errorf("start the browser %s: %w", bin, err)
	}
	// Downloads would land in the user's folders, outside the workspace.
	if err := s.denyDownloads(ctx, rootCtx); err != nil {
		o.Logger.Warn("deny downloads", "error", err)
	}
	c := chromedp.FromContext(rootCtx)
	root.setID(c.Target.TargetID)
	s.sizeViewport(ctx, root)
	pgid := 0
	if p := c.Browser.Process(); p != nil {
		pgid = p.Pid // Prepare made the browser the leader of its own group
	}
	s.life.Lock()
	s.rootCtx, s.rootCancel, s.allocCancel, s.profile, s.pgid, s.proxy = rootCtx, rootCancel, allocCancel, profile, pgid, proxy
	s.life.Unlock()
	s.tabs, s.cur, s.refs = []*Tab{root}, 0, newRefs()
	if pgid > 0 {
		if err := sdk.HostFrom(ctx).ReportProcessGroup(ctx, pgid, true); err != nil {
			o.Logger.Warn("report the browser's process group", "pgid", pgid, "error", err)
		} else {
			s.reported = true
		}
	}
	o.Logger.Debug("browser started", "session", s.id, "binary", bin, "pgid", pgid)
	return nil
}

func (s *Session) denyDownloads(ctx, rootCtx context.Context) error {
	a, cancel := s.bounded(ctx, rootCtx)
	defer cancel()
	_, err := chromedp.CallBrowser(a, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorDeny})
	return err
}

// firstRun runs a tab context for the first time, which starts the browser
// or attaches the tab. That run must be on the tab's own context (chromedp
// ties the tab's lifetime to it), so it runs apart and the call waits for
// it at most d.
func (s *Session) firstRun(ctx, tabCtx context.Context, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(tabCtx) }()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		return fmt.Errorf("no answer within %v", d)
	case <-ctx.Done():
		return contextErr(ctx, "starting the browser")
	}
}

// teardown stops the browser, if any, and forgets its tabs: the process
// group is killed, the profile folder removed, and the host told.
func (s *Session) teardown(ctx context.Context) {
	pgid := s.stop()
	s.tabs, s.cur, s.refs = nil, 0, newRefs()
	if s.reported && pgid > 0 && ctx != nil {
		if err := sdk.HostFrom(ctx).ReportProcessGroup(ctx, pgid, false); err != nil {
			s.m.opts.Logger.Warn("report the browser's process group ended", "pgid", pgid, "error", err)
		}
	}
	s.reported = false
}

// stop kills the browser's process group and waits for chromedp to let go
// of it; it returns the group. Safe to call while a call runs: the call
// then fails.
func (s *Session) stop() int {
	s.life.Lock()
	rootCancel, allocCancel, profile, pgid := s.rootCancel, s.allocCancel, s.profile, s.pgid
	s.rootCancel, s.allocCancel, s.profile, s.pgid = nil, nil, "", 0
	s.life.Unlock()
	if pgid > 0 {
		if err := chrome.KillGroup(pgid); err != nil {
			s.m.opts.Logger.Warn("kill the browser's process group", "pgid", pgid, "error", err)
		}
	}
	if rootCancel != nil {
		rootCancel()
	}
	if allocCancel != nil {
		allocCancel()
	}
	if profile != "" {
		os.RemoveAll(profile)
	}
	return pgid
}

// restore reopens the tabs saved by an earlier browser of this session.
func (s *Session) restore(ctx context.Context) {
	st, err := loadTabs(s.state)
	if err != nil {
		s.event("The saved tabs could not be read (%v); starting with one blank tab.", err)
		return
	}
	if len(st.Tabs) == 0 {
		return
	}
	opened := 0
	for i, saved := range st.Tabs {
		t := s.tabs[0]
		if i > 0 {
			if t, err = s.openTab(ctx); err != nil {
				s.event("Tab %d (%s) could not be reopened: %v", i, saved.URL, err)
				continue
			}
			s.tabs = append(s.tabs, t)
		}
		opened++
		if saved.URL == "" || saved.URL == "about:blank" {
			continue
		}
		if _, err := s.load(ctx, t, saved.URL); err != nil {
			s.event("Tab %d could not load %s again: %v", len(s.tabs)-1, saved.URL, err)
		}
	}
	s.cur = min(max(st.Current, 0), len(s.tabs)-1)
	s.front(ctx, s.tabs[s.cur])
	s.event("Reopened %d tab(s) that this session had open before the browser plugin restarted; the current tab is %d.", opened, s.cur)
}

// save writes the tabs (URLs in order, the current one) to the session
// folder.
func (s *Session) save(ctx context.Context) {
	if s.state == "" {
		return
	}
	infos, err := s.pageTargets(ctx)
	if err != nil {
		s.m.opts.Logger.Warn("list the browser's tabs to save them", "error", err)
		return
	}
	st := savedTabs{Current: s.cur}
	for _, t := range s.tabs {
		info := infos[t.ID()]
		if info == nil {
			info = &target.Info{URL: "about:blank"}
		}
		st.Tabs = append(st.Tabs, savedTab{URL: info.URL, Title: info.Title})
	}
	if s.saved != nil && s.saved.Current == st.Current && slices.Equal(s.saved.Tabs, st.Tabs) {
		return
	}
	if err := saveTabs(s.state, st); err != nil {
		s.m.opts.Logger.Warn("save the browser's tabs", "error", err)
		return
	}
	s.saved = &st
}

// pageTargets lists the browser's pages by target id.
func (s *Session) pageTargets(ctx context.Context) (map[target.ID]*target.Info, error) {
	s.life.Lock()
	root := s.rootCtx
	s.life.Unlock()
	if root == nil {
		return nil, errors.New("the browser is not running")
	}
	a, cancel := s.bounded(ctx, root)
	defer cancel()
	res, err := chromedp.CallBrowser(a, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return nil, err
	}
	out := map[target.ID]*target.Info{}
	for _, info := range res.TargetInfos {
		if info != nil && info.Type == "page" {
			out[info.TargetID] = info
		}
	}
	return out, nil
}

// reconcile follows the tabs the pages opened (popups, target=_blank) or
// closed (window.close) since the last look.
func (s *Session) reconcile(ctx context.Context) {
	infos, err := s.pageTargets(ctx)
	if err != nil {
		return
	}
	known := map[target.ID]bool{}
	for i := len(s.tabs) - 1; i >= 0; i-- {
		t := s.tabs[i]
		known[t.ID()] = true
		if infos[t.ID()] != nil {
			continue
		}
		s.dropTab(i)
		s.event("Tab %d was closed by its page.", i)
		if !t.root {
			go t.cancel() // the target is gone: only chromedp's side is left
		}
	}
	for id, info := range infos {
		if known[id] {
			continue
		}
		t, err := s.attach(ctx, id)
		if err != nil {
			s.m.opts.Logger.Warn("attach to a new tab", "target", id, "error", err)
			continue
		}
		s.tabs = append(s.tabs, t)
		where := ""
		if info.URL != "" && info.URL != "about:blank" {
			where = " at " + info.URL
		}
		s.event("The page opened a new tab %d%s. Switch to it with browser_tabs {\"action\": \"select\", \"index\": %d}.", len(s.tabs)-1, where, len(s.tabs)-1)
	}
	if len(s.tabs) == 0 {
		if t, err := s.openTab(ctx); err == nil {
			s.tabs = []*Tab{t}
			s.cur = 0
			s.event("Every tab was closed; a blank tab was opened.")
		}
	}
}

// dropTab removes tab i from the list, keeping the current tab current
// when it stays.
func (s *Session) dropTab(i int) {
	s.refs.forget(s.tabs[i])
	s.tabs = append(s.tabs[:i], s.tabs[i+1:]...)
	switch {
	case s.cur > i:
		s.cur--
	case s.cur == i:
		s.cur = max(0, min(i, len(s.tabs)-1))
	}
}

// openTab opens a new blank tab (not added to the list).
func (s *Session) openTab(ctx context.Context) (*Tab, error) {
	t := newTab(s.m.opts.DismissDialogs)
	tctx, cancel := chromedp.NewContext(s.rootCtx, chromedp.WithListener(t.onEvent))
	t.ctx, t.cancel = tctx, cancel
	if err := s.firstRun(ctx, tctx, s.m.opts.ActionTimeout); err != nil {
		go cancel()
		return nil, fmt.Errorf("open a tab: %w", err)
	}
	t.setID(chromedp.FromContext(tctx).Target.TargetID)
	s.sizeViewport(ctx, t)
	return t, nil
}

// attach attaches to a tab the browser already has (not added to the
// list).
func (s *Session) attach(ctx context.Context, id target.ID) (*Tab, error) {
	t := newTab(s.m.opts.DismissDialogs)
	t.setID(id)
	tctx, cancel := chromedp.NewContext(s.rootCtx, chromedp.WithTargetID(id), chromedp.WithListener(t.onEvent))
	t.ctx, t.cancel = tctx, cancel
	if err := s.firstRun(ctx, tctx, s.m.opts.ActionTimeout); err != nil {
		go cancel()
		return nil, fmt.Errorf("attach to tab %s: %w", id, err)
	}
	s.sizeViewport(ctx, t)
	return t, nil
}

// sizeViewport gives t's page the viewport the options name (the window
// headless Chromium opens at --window-size lays pages out shorter).
func (s *Session) sizeViewport(ctx context.Context, t *Tab) {
	w, h := s.m.opts.viewport()
	a, cancel := s.bounded(ctx, t.ctx)
	defer cancel()
	if err := chromedp.Do(a, chromedp.EmulateViewport(int64(w), int64(h))); err != nil {
		s.m.opts.Logger.Warn("size the tab's viewport", "error", err)
	}
}

// current returns the current tab.
func (s *Session) current() *Tab {
	return s.tabs[s.cur]
}

func (s *Session) tabIndex(t *Tab) int {
	for i, x := range s.tabs {
		if x == t {
			return i
		}
	}
	return -1
}

// front brings t to the front, so it renders and gets animation frames.
func (s *Session) front(ctx context.Context, t *Tab) {
	a, cancel := s.bounded(ctx, t.ctx)
	defer cancel()
	if _, err := chromedp.Call(a, page.BringToFront, cdp.Empty{}); err != nil {
		s.m.opts.Logger.Debug("bring a tab to the front", "error", err)
	}
}

// bounded returns a context for one action on chromedp context base (a
// tab's or the browser's): ended by the call's context, its deadline, or
// the action timeout, whichever comes first.
func (s *Session) bounded(ctx, base context.Context) (context.Context, context.CancelFunc) {
	a, cancel := context.WithTimeout(base, s.m.opts.ActionTimeout)
	if dl, ok := ctx.Deadline(); ok {
		var cancel2 context.CancelFunc
		a, cancel2 = context.WithDeadline(a, dl)
		prev := cancel
		cancel = func() { cancel2(); prev() }
	}
	stop := context.AfterFunc(ctx, cancel)
	return a, func() { stop(); cancel() }
}

// explain turns what chromedp returns into an error the model can act on.
func (s *Session) explain(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := sdk.AsToolError(err); ok {
		return err
	}
	switch {
	case s.started && !s.running():
		return &sdk.ToolError{Code: CodeBrowserCrashed, Message: fmt.Sprintf(
			"the browser stopped during the call (%v); the next browser tool starts it again and reopens the tabs", err)}
	case ctx.Err() != nil:
		return contextErr(ctx, "the browser call")
	case errors.Is(err, context.DeadlineExceeded):
		return sdk.Errorf(sdk.CodeTimeout, "the browser did not finish within %v (%v); the page may be slow or stuck: try browser_snapshot, or browser_wait_for", s.m.opts.ActionTimeout, err)
	case errors.Is(err, chromedp.ErrTargetDetached):
		return sdk.Errorf(sdk.CodeToolFailed, "the tab closed during the call; browser_tabs lists the open ones")
	}
	return err
}

// decorateErr adds the side events to a tool error, so a dialog answered
// during a failed call is still told.
func (s *Session) decorateErr(err error) error {
	ev := s.takeEvents()
	if len(ev) == 0 {
		return err
	}
	if te, ok := sdk.AsToolError(err); ok {
		c := *te
		c.Message += "\n\n### Events\n" + bullet(ev)
		return &c
	}
	return fmt.Errorf("%w\n\n### Events\n%s", err, bullet(ev))
}

func contextErr(ctx context.Context, what string) *sdk.ToolError {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return sdk.Errorf(sdk.CodeTimeout, "%s did not finish before the call's deadline", what)
	}
	return sdk.Errorf(sdk.CodeCancelled, "%s was cancelled", what)
}
