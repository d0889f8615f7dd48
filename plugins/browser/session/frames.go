package session

import (
	"context"
	"math"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// crossFrame is a cross-site iframe of a tab's document, which Chromium
// renders in a process of its own: the tab attaches to its target to read
// its tree and act on its elements.
type crossFrame struct {
	id target.ID
	// owner is the <iframe> element in the page: where the frame's
	// coordinates start.
	owner  cdp.BackendNodeID
	ctx    context.Context
	cancel context.CancelFunc
}

// frameNodeBase marks a node of a cross-site frame: frameNode(slot, node)
// is frameNodeBase | slot<<32 | node, which no node of the page's own
// process reaches (their ids count up from 1).
const frameNodeBase = cdp.BackendNodeID(1) << 40

// frameNode is node of the tab's cross-site frame slot as the snapshot and
// the refs know it; 0 (no ref) for a node id past 32 bits.
func frameNode(slot int, node cdp.BackendNodeID) cdp.BackendNodeID {
	if node <= 0 || node > math.MaxUint32 {
		return 0
	}
	return frameNodeBase | cdp.BackendNodeID(slot)<<32 | node
}

// frameOfNode splits a frameNode; false for a node of the page itself.
func frameOfNode(n cdp.BackendNodeID) (slot int, node cdp.BackendNodeID, ok bool) {
	if n < frameNodeBase {
		return 0, n, false
	}
	return int((n - frameNodeBase) >> 32), n & math.MaxUint32, true
}

// crossFrame returns the tab's attached frame id of document gen, owned by
// the <iframe> owner, and its slot, attaching on first sight; nil when it
// cannot be attached. A new document lets the frames of the old one go.
func (s *Session) crossFrame(ctx context.Context, t *Tab, gen uint64, id target.ID, owner cdp.BackendNodeID) (*crossFrame, int) {
	if t.frameGen != gen {
		for _, f := range t.frames {
			go f.cancel()
		}
		t.frames, t.frameGen = nil, gen
	}
	for i, f := range t.frames {
		if f.id == id {
			f.owner = owner
			return f, i
		}
	}
	fctx, cancel := chromedp.NewContext(t.ctx, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
	if err := s.firstRun(ctx, fctx, s.m.opts.ActionTimeout); err != nil {
		go cancel()
		s.m.opts.Logger.Debug("attach to a cross-site frame", "frame", id, "error", err)
		return nil, 0
	}
	t.frames = append(t.frames, &crossFrame{id: id, owner: owner, ctx: fctx, cancel: cancel})
	return t.frames[len(t.frames)-1], len(t.frames) - 1
}

// element is the element an action is on: its node where its DOM commands
// run (the tab, or its cross-site frame), the tab's context for the input
// events, and what maps the node's coordinates to the page's.
type element struct {
	node cdp.BackendNodeID
	// dom runs the node's DOM and script commands; in the tab's input
	// events.
	dom, in context.Context
	// frame is the cross-site frame the node is in, nil for the page.
	frame  *crossFrame
	cancel func()
}

// frameOffset is where the content of the <iframe> owner starts in the
// page.
func frameOffset(a context.Context, owner cdp.BackendNodeID) (x, y float64, err error) {
	m, err := chromedp.Call(a, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: owner})
	if err != nil {
		return 0, 0, err
	}
	if m.Model == nil || len(m.Model.Content) < 2 {
		return 0, 0, nil
	}
	return m.Model.Content[0], m.Model.Content[1], nil
}
