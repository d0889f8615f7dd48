package session

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/yagent/yagent/sdk"
)

// Element names the element a tool acts on: a ref from browser_snapshot,
// or a CSS selector that matches exactly one element.
type Element struct {
	Ref      string
	Selector string
}

func (e Element) String() string {
	if e.Ref != "" {
		return e.Ref
	}
	return fmt.Sprintf("selector %q", e.Selector)
}

// objectGroup releases the page objects a tool call resolved.
const objectGroup = "yagent-browser"

// node resolves e in the current tab.
func (s *Session) node(ctx context.Context, t *Tab, e Element) (cdp.BackendNodeID, error) {
	switch {
	case e.Ref != "" && e.Selector != "":
		return 0, sdk.Errorf(sdk.CodeInvalidInput, "give either ref or selector, not both")
	case e.Ref != "":
		return s.refs.resolve(e.Ref, t, s.tabIndex)
	case strings.TrimSpace(e.Selector) != "":
		return s.selectorNode(ctx, t, e.Selector)
	}
	return 0, sdk.Errorf(sdk.CodeInvalidInput, "name the element: ref (like e12, from browser_snapshot) or selector (a CSS selector)")
}

// onElement finds e in tab t and bounds an action on it by the action
// timeout; the caller calls the element's cancel when the action is over.
// An element of a cross-site frame runs its DOM commands in the frame.
func (s *Session) onElement(ctx context.Context, t *Tab, e Element) (*element, error) {
	node, err := s.node(ctx, t, e)
	if err != nil {
		return nil, err
	}
	in, cancelIn := s.bounded(ctx, t.ctx)
	el := &element{node: node, dom: in, in: in, cancel: cancelIn}
	slot, inner, ok := frameOfNode(node)
	if !ok {
		return el, nil
	}
	if slot >= len(t.frames) || t.frameGen != t.Gen() {
		cancelIn()
		return nil, staleRef("element %s is in a frame of an older snapshot; call browser_snapshot and use a ref from it", e)
	}
	f := t.frames[slot]
	d, cancelDom := s.bounded(ctx, f.ctx)
	el.node, el.dom, el.frame = inner, d, f
	el.cancel = func() { cancelDom(); cancelIn() }
	return el, nil
}

// point scrolls el into view and returns the middle of its largest box in
// the page's coordinates, where input events go.
func (s *Session) point(ctx context.Context, el *element, e Element) (x, y float64, err error) {
	if el.frame != nil {
		// The frame first, then the element in it.
		if _, err := chromedp.Call(el.in, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: el.frame.owner}); err != nil {
			return 0, 0, s.nodeErr(ctx, e, "scroll to the frame of", err)
		}
	}
	x, y, err = s.center(ctx, el.dom, e, el.node)
	if err != nil || el.frame == nil {
		return x, y, err
	}
	dx, dy, err := frameOffset(el.in, el.frame.owner)
	if err != nil {
		return 0, 0, s.nodeErr(ctx, e, "locate the frame of", err)
	}
	return x + dx, y + dy, nil
}

// selectorNode finds the one element matching the CSS selector sel.
func (s *Session) selectorNode(ctx context.Context, t *Tab, sel string) (cdp.BackendNodeID, error) {
	a, cancel := s.bounded(ctx, t.ctx)
	defer cancel()
	defer release(a)
	quoted, _ := json.Marshal(sel)
	expr := fmt.Sprintf(`(() => { const all = document.querySelectorAll(%s); return all.length === 1 ? all[0] : all.length; })()`, quoted)
	res, err := chromedp.Call(a, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ObjectGroup: objectGroup, Silent: ptr(true)})
	if err != nil {
		return 0, s.explain(ctx, fmt.Errorf("find selector %q: %w", sel, err))
	}
	if res.ExceptionDetails != nil {
		return 0, sdk.Errorf(sdk.CodeInvalidInput, "selector %q is not valid CSS: %s", sel, exceptionText(res.ExceptionDetails))
	}
	r := res.Result
	if r == nil || r.ObjectID == "" {
		n := "0"
		if r != nil && len(r.Value) > 0 {
			n = string(r.Value)
		}
		if n == "0" {
			return 0, sdk.Errorf(sdk.CodeNotFound, "no element matches selector %q; call browser_snapshot to see the page and use a ref", sel)
		}
		return 0, sdk.Errorf(sdk.CodeInvalidInput, "selector %q matches %s elements; make it match one (an id, :nth-of-type) or use a ref from browser_snapshot", sel, n)
	}
	d, err := chromedp.Call(a, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: r.ObjectID})
	if err != nil || d.Node == nil {
		return 0, s.explain(ctx, fmt.Errorf("describe the element of selector %q: %w", sel, err))
	}
	return d.Node.BackendNodeID, nil
}

// release frees the page objects of this call.
func release(a context.Context) {
	_, _ = chromedp.Call(a, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: objectGroup})
}

// nodeErr explains a failed command on the element e.
func (s *Session) nodeErr(ctx context.Context, e Element, what string, err error) error {
	var ce *cdproto.Error
	if asCDP(err, &ce) {
		msg := strings.ToLower(ce.Message)
		switch {
		case strings.Contains(msg, "no node") || strings.Contains(msg, "could not find node") || strings.Contains(msg, "node is detached"):
			return staleRef("element %s is no longer in the page; call browser_snapshot and use a ref from it", e)
		case strings.Contains(msg, "layout object") || strings.Contains(msg, "could not compute content quads"):
			return sdk.Errorf(sdk.CodeNotFound, "element %s has no box on the page (it is hidden or not rendered); call browser_snapshot and pick a visible element", e)
		}
	}
	return s.explain(ctx, fmt.Errorf("%s %s: %w", what, e, err))
}

// center scrolls node into view and returns the middle of its largest box
// on screen.
func (s *Session) center(ctx, a context.Context, e Element, node cdp.BackendNodeID) (x, y float64, err error) {
	if _, err := chromedp.Call(a, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: node}); err != nil {
		return 0, 0, s.nodeErr(ctx, e, "scroll to", err)
	}
	q, err := chromedp.Call(a, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: node})
	if err != nil {
		return 0, 0, s.nodeErr(ctx, e, "locate", err)
	}
	best := -1.0
	for _, quad := range q.Quads {
		if len(quad) != 8 {
			continue
		}
		if area := quadArea(quad); area > best {
			best = area
			x = (quad[0] + quad[2] + quad[4] + quad[6]) / 4
			y = (quad[1] + quad[3] + quad[5] + quad[7]) / 4
		}
	}
	if best <= 0 {
		return 0, 0, sdk.Errorf(sdk.CodeNotFound, "element %s has no visible box (zero size); call browser_snapshot and pick a visible element", e)
	}
	return x, y, nil
}

func quadArea(q dom.Quad) float64 {
	area := 0.0
	for i := 0; i < 4; i++ {
		j := (i + 1) % 4
		area += q[2*i]*q[2*j+1] - q[2*j]*q[2*i+1]
	}
	return math.Abs(area) / 2
}

// Click clicks e in the current tab, waits for a navigation it starts, and
// returns the snapshot.
func (s *Session) Click(ctx context.Context, e Element, double bool) (*sdk.Result, error) {
	t := s.current()
	el, err := s.onElement(ctx, t, e)
	if err != nil {
		return nil, err
	}
	defer el.cancel()
	if d, err := chromedp.Call(el.dom, dom.DescribeNode, dom.DescribeNodeParams{BackendNodeID: el.node}); err == nil && d.Node != nil && strings.EqualFold(d.Node.NodeName, "option") {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "%s is an option of a dropdown, which a click does not choose; use browser_select_option with the dropdown's ref and this option's value or label", e)
	}
	x, y, err := s.point(ctx, el, e)
	if err != nil {
		return nil, err
	}
	t.forgetLoading()
	clicks := int64(1)
	if double {
		clicks = 2
	}
	if err := mouse(el.in, x, y, clicks); err != nil {
		return nil, s.explain(ctx, fmt.Errorf("click %s: %w", e, err))
	}
	verb := "Clicked"
	if double {
		verb = "Double-clicked"
	}
	return s.afterInput(ctx, t, fmt.Sprintf("%s %s.", verb, e))
}

// mouse moves to (x, y) and clicks there clicks times (0: only moves).
func mouse(a context.Context, x, y float64, clicks int64) error {
	if _, err := chromedp.Call(a, input.DispatchMouseEvent, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y}); err != nil {
		return err
	}
	for n := int64(1); n <= clicks; n++ {
		for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
			p := input.DispatchMouseEventParams{Type: typ, X: x, Y: y, Button: input.MouseButtonLeft, ClickCount: n}
			if typ == input.DispatchMouseEventTypeMousePressed {
				p.Buttons = 1
			}
			if _, err := chromedp.Call(a, input.DispatchMouseEvent, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// afterInput waits for a navigation the input started, then returns lead
// and what changed on the page (or the snapshot of a new one).
func (s *Session) afterInput(ctx context.Context, t *Tab, lead string) (*sdk.Result, error) {
	s.flushTasks(ctx, t)
	if !t.waitIdle(ctx, s.m.opts.SettleTimeout) && ctx.Err() == nil {
		s.event("The page was still loading %v after the action.", s.m.opts.SettleTimeout)
	}
	if s.tabIndex(t) < 0 || !s.running() {
		return &sdk.Result{Text: lead}, nil
	}
	s.reconcile(ctx)
	return s.withChanges(ctx, lead, PageInfo{})
}

// flushTasks lets the page run the tasks an input queued (a form
// submission is one: its navigation starts a task later, after the click
// has returned), so waitIdle sees a navigation the input caused. A page
// that navigates away meanwhile ends the evaluation; that is fine.
func (s *Session) flushTasks(ctx context.Context, t *Tab) {
	a, cancel := s.bounded(ctx, t.ctx)
	defer cancel()
	_, _ = chromedp.Call(a, runtime.Evaluate, runtime.EvaluateParams{
		Expression:   `new Promise(r => setTimeout(r, 0))`,
		AwaitPromise: ptr(true),
		Silent:       ptr(true),
	})
}

// Hover moves the mouse over e.
func (s *Session) Hover(ctx context.Context, e Element) (*sdk.Result, error) {
	t := s.current()
	el, err := s.onElement(ctx, t, e)
	if err != nil {
		return nil, err
	}
	defer el.cancel()
	x, y, err := s.point(ctx, el, e)
	if err != nil {
		return nil, err
	}
	if err := mouse(el.in, x, y, 0); err != nil {
		return nil, s.explain(ctx, fmt.Errorf("hover %s: %w", e, err))
	}
	return &sdk.Result{Text: fmt.Sprintf("Hovered over %s.", e)}, nil
}

// selectContents selects what an input, textarea or editable element
// holds, so typed text replaces it; a picker's input (date, time, color,
// range...) is set by value instead.
const selectContents = `function() {
	if (this instanceof HTMLInputElement && ['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range'].includes(this.type)) {
		return 'value';
	}
	if (this instanceof HTMLInputElement || this instanceof HTMLTextAreaElement) {
		try { this.select(); } catch (e) { this.value = ''; }
		return 'field';
	}
	if (this.isContentEditable) {
		const r = document.createRange();
		r.selectNodeContents(this);
		const sel = getSelection();
		sel.removeAllRanges();
		sel.addRange(r);
		return 'editable';
	}
	return 'other';
}`

// Type focuses e, replaces its contents with text and, with submit,
// presses Enter.
func (s *Session) Type(ctx context.Context, e Element, text string, submit bool) (*sdk.Result, error) {
	t := s.current()
	el, err := s.onElement(ctx, t, e)
	if err != nil {
		return nil, err
	}
	defer el.cancel()
	defer release(el.dom)
	a, node := el.dom, el.node
	if _, err := chromedp.Call(a, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: node}); err != nil {
		return nil, s.nodeErr(ctx, e, "scroll to", err)
	}
	if _, err := chromedp.Call(a, dom.Focus, dom.FocusParams{BackendNodeID: node}); err != nil {
		var ce *cdproto.Error
		if asCDP(err, &ce) && strings.Contains(strings.ToLower(ce.Message), "not focusable") {
			return nil, sdk.Errorf(sdk.CodeInvalidInput, "element %s does not take text (it cannot be focused); pick a textbox from browser_snapshot", e)
		}
		return nil, s.nodeErr(ctx, e, "focus", err)
	}
	kind, err := s.callOn(a, node, selectContents, nil)
	if err != nil {
		return nil, s.nodeErr(ctx, e, "select the contents of", err)
	}
	if kind == `"other"` {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "element %s is not a text field or an editable element; pick a textbox from browser_snapshot", e)
	}
	if kind == `"value"` {
		t.forgetLoading()
		got, err := s.callOn(a, node, setByValue, []any{text})
		if err != nil {
			if se, ok := err.(*scriptError); ok {
				return nil, sdk.Errorf(sdk.CodeInvalidInput, "cannot set %s to %q: %s", e, text, se.text)
			}
			return nil, s.nodeErr(ctx, e, "set the value of", err)
		}
		var value string
		if json.Unmarshal([]byte(got), &value) != nil {
			value = got
		}
		lead := fmt.Sprintf("Set %s to %s.", e, value)
		if submit {
			if err := pressKeys(el.in, "Enter"); err != nil {
				return nil, s.explain(ctx, fmt.Errorf("press Enter in %s: %w", e, err))
			}
			lead = fmt.Sprintf("Set %s to %s and pressed Enter.", e, value)
		}
		return s.afterInput(ctx, t, lead)
	}
	t.forgetLoading()
	if text == "" {
		err = pressKeys(el.in, "Delete")
	} else {
		_, err = chromedp.Call(el.in, input.InsertText, input.InsertTextParams{Text: text})
	}
	if err != nil {
		return nil, s.explain(ctx, fmt.Errorf("type into %s: %w", e, err))
	}
	lead := fmt.Sprintf("Typed %d character(s) into %s.", len([]rune(text)), e)
	if submit {
		if err := pressKeys(el.in, "Enter"); err != nil {
			return nil, s.explain(ctx, fmt.Errorf("press Enter in %s: %w", e, err))
		}
		lead = fmt.Sprintf("Typed %d character(s) into %s and pressed Enter.", len([]rune(text)), e)
	}
	return s.afterInput(ctx, t, lead)
}

// PressKey presses key (a name like Enter or ArrowDown, one character, or
// a combination like Control+a) in the current tab.
func (s *Session) PressKey(ctx context.Context, key string) (*sdk.Result, error) {
	t := s.current()
	a, cancel := s.bounded(ctx, t.ctx)
	defer cancel()
	t.forgetLoading()
	if err := pressKeys(a, key); err != nil {
		if _, ok := sdk.AsToolError(err); ok {
			return nil, err
		}
		return nil, s.explain(ctx, fmt.Errorf("press %s: %w", key, err))
	}
	return s.afterInput(ctx, t, fmt.Sprintf("Pressed %s.", key))
}

// setByValue sets a picker's input (date, time, datetime-local, month,
// week, color, range) to a value, as a user's pick does: through the
// element's own value setter, then input and change. A value the input
// does not take is refused with the form it wants, the input left as it
// was; it returns the value the input holds (a range rounds to its step
// and bounds).
const setByValue = `function(v) {
	const forms = {'date': 'YYYY-MM-DD', 'time': 'HH:MM or HH:MM:SS', 'datetime-local': 'YYYY-MM-DDTHH:MM',
		'month': 'YYYY-MM', 'week': 'YYYY-Www (2024-W05)', 'color': '#rrggbb', 'range': 'a number'};
	const bad = () => new Error('a ' + this.type + ' input takes ' + forms[this.type] + (this.type === 'range' ? ' from ' + this.min + ' to ' + this.max : ''));
	if (this.type === 'color' && !/^#[0-9a-fA-F]{6}$/.test(v)) throw bad();
	if (this.type === 'range' && (v.trim() === '' || isNaN(Number(v)))) throw bad();
	const set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
	const before = this.value;
	set.call(this, v);
	if (v !== '' && this.value === '') {
		set.call(this, before); // a refused value leaves the input as it was
		throw bad();
	}
	this.dispatchEvent(new Event('input', {bubbles: true}));
	this.dispatchEvent(new Event('change', {bubbles: true}));
	return this.value;
}`

// chooseOptions selects the options of a <select> by value or label and
// fires input and change, as a user's choice does.
const chooseOptions = `function(values) {
	if (!(this instanceof HTMLSelectElement)) {
		throw new Error('the element is a <' + this.tagName.toLowerCase() + '>, not a <select>');
	}
	const opts = Array.from(this.options);
	const picked = [];
	for (const v of values) {
		const o = opts.find(o => o.value === v) || opts.find(o => o.label === v || o.text.trim() === v);
		if (!o) {
			throw new Error('no option ' + JSON.stringify(v) + '; the options are ' + opts.map(o => JSON.stringify(o.value) + (o.label !== o.value ? ' (' + JSON.stringify(o.label) + ')' : '')).join(', '));
		}
		if (o.disabled) throw new Error('option ' + JSON.stringify(v) + ' is disabled');
		picked.push(o);
	}
	if (!this.multiple && picked.length > 1) {
		throw new Error('this <select> takes one value, got ' + picked.length);
	}
	for (const o of opts) o.selected = picked.includes(o);
	this.dispatchEvent(new Event('input', {bubbles: true}));
	this.dispatchEvent(new Event('change', {bubbles: true}));
	return picked.map(o => o.value);
}`

// SelectOption selects values (option values or labels) in the <select> e.
func (s *Session) SelectOption(ctx context.Context, e Element, values []string) (*sdk.Result, error) {
	t := s.current()
	el, err := s.onElement(ctx, t, e)
	if err != nil {
		return nil, err
	}
	defer el.cancel()
	defer release(el.dom)
	if values == nil {
		values = []string{}
	}
	t.forgetLoading()
	got, err := s.callOn(el.dom, el.node, chooseOptions, []any{values})
	if err != nil {
		if se, ok := err.(*scriptError); ok {
			return nil, sdk.Errorf(sdk.CodeInvalidInput, "cannot select %q in %s: %s", values, e, se.text)
		}
		return nil, s.nodeErr(ctx, e, "select options in", err)
	}
	return s.afterInput(ctx, t, fmt.Sprintf("Selected %s in %s.", got, e))
}

// scriptError is an exception thrown by a function the plugin ran.
type scriptError struct{ text string }

func (e *scriptError) Error() string { return e.text }

// callOn calls the function fn on node with args and returns its result
// as JSON; a throw is a *scriptError.
func (s *Session) callOn(a context.Context, node cdp.BackendNodeID, fn string, args []any) (string, error) {
	obj, err := chromedp.Call(a, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: node, ObjectGroup: objectGroup})
	if err != nil {
		return "", err
	}
	if obj.Object == nil || obj.Object.ObjectID == "" {
		return "", fmt.Errorf("the element has no JavaScript object")
	}
	var callArgs []*runtime.CallArgument
	for _, v := range args {
		raw, err := json.Marshal(v)
		if err != nil {
			return "", err
		}
		callArgs = append(callArgs, &runtime.CallArgument{Value: raw})
	}
	res, err := chromedp.Call(a, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
		FunctionDeclaration: fn,
		ObjectID:            obj.Object.ObjectID,
		Arguments:           callArgs,
		ReturnByValue:       ptr(true),
		AwaitPromise:        ptr(true),
		Silent:              ptr(true),
		UserGesture:         ptr(true),
	})
	if err != nil {
		return "", err
	}
	if res.ExceptionDetails != nil {
		return "", &scriptError{text: exceptionText(res.ExceptionDetails)}
	}
	if res.Result == nil || len(res.Result.Value) == 0 {
		return "null", nil
	}
	return string(res.Result.Value), nil
}

func ptr[T any](v T) *T { return &v }
