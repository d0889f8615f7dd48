package session

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Bounds of what a tab keeps.
const (
	maxConsoleMessages = 500
	maxConsoleText     = 2000
)

// Tab is one page of a session's browser. Its fields that events change
// are guarded by mu: the listener runs on chromedp's reading goroutine.
type Tab struct {
	// ctx is the tab's chromedp context; cancel closes the tab (for the
	// root tab, the whole browser).
	ctx    context.Context
	cancel context.CancelFunc
	// root is the tab the browser started with; closing it goes through
	// the browser, since cancelling its context stops the browser.
	root bool
	// dismiss answers confirm() and prompt() with Cancel.
	dismiss bool

	mu       sync.Mutex
	id       target.ID
	gen      uint64 // bumped by every new document in the main frame
	console  []ConsoleMessage
	dropped  int      // console messages dropped past the cap
	reports  []string // dialogs answered, not yet told to the model
	loading  bool
	idle     chan struct{} // closed while the main frame is not loading
	closedBy string        // set when the page closed itself

	// snap is the latest snapshot of the page, kept for paging; it
	// belongs to the call holding the session.
	snap *snapshot
	// frames are the cross-site frames of document frameGen attached so
	// far, by slot (see frameNode); they belong to the call holding the
	// session.
	frames   []*crossFrame
	frameGen uint64
}

// ConsoleMessage is one message a page wrote to its console, or an
// uncaught exception.
type ConsoleMessage struct {
	// Level is log, info, warning, error, debug, ... or exception.
	Level string `json:"level"`
	Text  string `json:"text"`
	// Where is the script location of errors and exceptions, "" for others.
	Where string `json:"where,omitempty"`
}

func newTab(dismiss bool) *Tab {
	idle := make(chan struct{})
	close(idle)
	return &Tab{dismiss: dismiss, idle: idle}
}

// setID records the tab's target id, which is also its main frame's id.
func (t *Tab) setID(id target.ID) {
	t.mu.Lock()
	t.id = id
	t.mu.Unlock()
}

// ID returns the tab's target id.
func (t *Tab) ID() target.ID {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.id
}

// Gen returns the generation of the tab's document: refs handed out under
// another generation point into a document that is gone.
func (t *Tab) Gen() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.gen
}

// onEvent is the tab's chromedp listener. It runs on the goroutine that
// reads the browser's messages, so it only records; answering a dialog
// (a command) happens on a goroutine of its own.
func (t *Tab) onEvent(ev any) {
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		t.addConsole(ConsoleMessage{Level: consoleLevel(e.Type), Text: consoleText(e.Args), Where: stackWhere(e.Type, e.StackTrace)})
	case *runtime.EventExceptionThrown:
		if d := e.ExceptionDetails; d != nil {
			t.addConsole(ConsoleMessage{Level: "exception", Text: exceptionText(d), Where: location(d.URL, d.LineNumber)})
		}
	case *page.EventJavascriptDialogOpening:
		t.answerDialog(e)
	case *page.EventFrameNavigated:
		if e.Frame != nil && e.Frame.ParentID == "" {
			t.mu.Lock()
			t.gen++
			t.mu.Unlock()
		}
	case *page.EventFrameRequestedNavigation:
		t.setLoading(string(e.FrameID), true)
	case *page.EventFrameStartedLoading:
		t.setLoading(string(e.FrameID), true)
	case *page.EventFrameStoppedLoading:
		t.setLoading(string(e.FrameID), false)
	}
}

// setLoading follows the main frame's loading state.
func (t *Tab) setLoading(frameID string, loading bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.id == "" || frameID != string(t.id) || t.loading == loading {
		return
	}
	t.loading = loading
	if loading {
		t.idle = make(chan struct{})
	} else {
		close(t.idle)
	}
}

// forgetLoading drops a loading state left from before an action (a
// navigation that was requested and never started), so the action waits
// only for what it starts itself.
func (t *Tab) forgetLoading() {
	t.setLoading(string(t.ID()), false)
}

// waitIdle waits until the main frame stops loading, at most d; it reports
// whether the frame is idle.
func (t *Tab) waitIdle(ctx context.Context, d time.Duration) bool {
	t.mu.Lock()
	idle := t.idle
	t.mu.Unlock()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-idle:
		return true
	case <-timer.C:
	case <-ctx.Done():
	}
	return false
}

func (t *Tab) answerDialog(e *page.EventJavascriptDialogOpening) {
	accept := true
	switch e.Type {
	case page.DialogTypeConfirm, page.DialogTypePrompt:
		accept = !t.dismiss
	}
	verb := "dismissed"
	if accept {
		verb = "accepted"
	}
	report := fmt.Sprintf("%s dialog %s was %s", e.Type, quoteLine(e.Message, 300), verb)
	if e.Type == page.DialogTypePrompt && accept {
		report += fmt.Sprintf(" with %s", quoteLine(e.DefaultPrompt, 100))
	}
	t.mu.Lock()
	t.reports = append(t.reports, report)
	t.mu.Unlock()
	params := page.HandleJavaScriptDialogParams{Accept: accept, PromptText: e.DefaultPrompt}
	go func() {
		ctx, cancel := context.WithTimeout(t.ctx, 10*time.Second)
		defer cancel()
		if _, err := chromedp.Call(ctx, page.HandleJavaScriptDialog, params); err != nil && t.ctx.Err() == nil {
			t.mu.Lock()
			t.reports = append(t.reports, fmt.Sprintf("the %s dialog could not be answered: %v", e.Type, err))
			t.mu.Unlock()
		}
	}()
}

// takeReports returns the dialog reports not yet told and forgets them.
func (t *Tab) takeReports() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.reports
	t.reports = nil
	return r
}

func (t *Tab) addConsole(m ConsoleMessage) {
	if len(m.Text) > maxConsoleText {
		m.Text = m.Text[:maxConsoleText] + "…"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.console) >= maxConsoleMessages {
		copy(t.console, t.console[1:])
		t.console = t.console[:len(t.console)-1]
		t.dropped++
	}
	t.console = append(t.console, m)
}

// Console returns the tab's console messages, oldest first, and how many
// older ones were dropped.
func (t *Tab) Console() ([]ConsoleMessage, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]ConsoleMessage(nil), t.console...), t.dropped
}

func consoleLevel(t runtime.ConsoleAPICalledType) string {
	switch t {
	case runtime.ConsoleAPICalledTypeWarning:
		return "warning"
	case runtime.ConsoleAPICalledTypeAssert:
		return "error"
	}
	return string(t)
}

// consoleText renders console arguments as the DevTools console does, in
// short: strings as they are, other values by their description, a
// leading format string applied.
func consoleText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	i := 0
	if len(args) > 0 && args[0] != nil && args[0].Type == runtime.RemoteObjectTypeString {
		format := remoteString(args[0])
		if strings.Contains(format, "%") {
			text, used := applyFormat(format, args[1:])
			parts = append(parts, text)
			i = 1 + used
		}
	}
	for ; i < len(args); i++ {
		parts = append(parts, remoteString(args[i]))
	}
	return strings.Join(parts, " ")
}

// applyFormat fills %s, %d, %i, %f, %o, %O and drops %c (CSS) from the
// console format string; it returns the text and how many args it used.
func applyFormat(format string, args []*runtime.RemoteObject) (string, int) {
	var b strings.Builder
	used := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		verb := format[i+1]
		switch verb {
		case '%':
			b.WriteByte('%')
			i++
		case 's', 'd', 'i', 'f', 'o', 'O', 'c':
			i++
			if used >= len(args) {
				b.WriteByte('%')
				b.WriteByte(verb)
				continue
			}
			if verb != 'c' {
				b.WriteString(remoteString(args[used]))
			}
			used++
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), used
}

// remoteString renders one remote value.
func remoteString(o *runtime.RemoteObject) string {
	if o == nil {
		return ""
	}
	switch o.Type {
	case runtime.RemoteObjectTypeUndefined:
		return "undefined"
	case runtime.RemoteObjectTypeString:
		var s string
		if err := unmarshalJSON(o.Value, &s); err == nil {
			return s
		}
	case runtime.RemoteObjectTypeNumber, runtime.RemoteObjectTypeBoolean, runtime.RemoteObjectTypeBigint:
		if o.UnserializableValue != "" {
			return string(o.UnserializableValue)
		}
		if len(o.Value) > 0 {
			return string(o.Value)
		}
	case runtime.RemoteObjectTypeObject:
		if o.Subtype == runtime.RemoteObjectSubtypeNull {
			return "null"
		}
		if o.Preview != nil {
			return previewString(o.Preview)
		}
	}
	if o.Description != "" {
		return o.Description
	}
	if len(o.Value) > 0 {
		return string(o.Value)
	}
	return string(o.Type)
}

// previewString renders an object preview as {a: 1, b: "x"} or [1, 2].
func previewString(p *runtime.ObjectPreview) string {
	if p.Subtype == runtime.ObjectPreviewSubtypeArray {
		items := make([]string, 0, len(p.Properties))
		for _, prop := range p.Properties {
			items = append(items, propertyString(prop))
		}
		if p.Overflow {
			items = append(items, "…")
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	if p.Type != runtime.ObjectPreviewTypeObject || (p.Subtype != "" && p.Subtype != runtime.ObjectPreviewSubtypeArray) {
		if p.Description != "" {
			return p.Description
		}
	}
	items := make([]string, 0, len(p.Properties))
	for _, prop := range p.Properties {
		items = append(items, prop.Name+": "+propertyString(prop))
	}
	if p.Overflow {
		items = append(items, "…")
	}
	prefix := ""
	if p.Description != "" && p.Description != "Object" {
		prefix = p.Description + " "
	}
	return prefix + "{" + strings.Join(items, ", ") + "}"
}

func propertyString(p *runtime.PropertyPreview) string {
	if p.ValuePreview != nil {
		return previewString(p.ValuePreview)
	}
	if p.Type == runtime.PropertyPreviewTypeString {
		return fmt.Sprintf("%q", p.Value)
	}
	return p.Value
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		desc := d.Exception.Description
		// The description carries the stack; its first line is the error.
		if first, _, ok := strings.Cut(desc, "\n"); ok {
			desc = first
		}
		if strings.HasPrefix(d.Text, "Uncaught") && !strings.HasPrefix(desc, "Uncaught") {
			return "Uncaught " + desc
		}
		return desc
	}
	if d.Exception != nil {
		return d.Text + " " + remoteString(d.Exception)
	}
	return d.Text
}

// stackWhere gives the location of warnings and errors, where it helps.
func stackWhere(typ runtime.ConsoleAPICalledType, st *runtime.StackTrace) string {
	if typ != runtime.ConsoleAPICalledTypeError && typ != runtime.ConsoleAPICalledTypeWarning && typ != runtime.ConsoleAPICalledTypeAssert {
		return ""
	}
	if st == nil || len(st.CallFrames) == 0 {
		return ""
	}
	f := st.CallFrames[0]
	return location(f.URL, f.LineNumber)
}

func location(url string, line int64) string {
	if url == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", url, line+1)
}

// quoteLine quotes s on one line, clipped to n characters.
func quoteLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
