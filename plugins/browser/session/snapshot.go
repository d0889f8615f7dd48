package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/yagent/yagent/plugins/browser/axtree"
	"github.com/yagent/yagent/sdk"
)

// PageInfo is what a result says about the page it leaves the tab on.
type PageInfo struct {
	Tab   int    `json:"tab"`
	Tabs  int    `json:"tabs"`
	URL   string `json:"url"`
	Title string `json:"title"`
	// Refs is how many element refs the snapshot hands out.
	Refs int `json:"refs,omitempty"`
	// Status is the HTTP status of a navigation, 0 when there was none.
	Status int64 `json:"status,omitempty"`
	// NextOffset is the offset of the snapshot's next page, 0 when the
	// answer showed the last; Remaining how many elements with refs lie
	// past this page.
	NextOffset int `json:"next_offset,omitempty"`
	Remaining  int `json:"remaining,omitempty"`
}

// Snapshot returns the current tab as an accessibility outline with a ref
// per element, the part of it v selects.
func (s *Session) Snapshot(ctx context.Context, v View) (*sdk.Result, error) {
	if err := badView(v); err != nil {
		return nil, err
	}
	return s.viewSnapshot(ctx, "", PageInfo{}, v)
}

// withSnapshot returns a result that starts with lead and shows the
// current tab's snapshot, its first page.
func (s *Session) withSnapshot(ctx context.Context, lead string, info PageInfo) (*sdk.Result, error) {
	return s.viewSnapshot(ctx, lead, info, View{})
}

// viewSnapshot returns a result that starts with lead and shows what v
// selects of the current tab's snapshot: a new one, or under an offset
// past 1 the one taken before of the same document.
func (s *Session) viewSnapshot(ctx context.Context, lead string, info PageInfo, v View) (*sdk.Result, error) {
	t := s.current()
	snap, changed, err := s.snapshotOf(ctx, t, v.Offset > 1)
	if err != nil {
		return nil, err
	}
	s.pageInfo(ctx, t, &info)
	snap.url, snap.title = info.URL, info.Title
	return s.answer(lead, info, snap, v, changed)
}

// answer shows what v selects of snap after lead; changed says the page
// got a new document since the snapshot the model was paging through.
func (s *Session) answer(lead string, info PageInfo, snap *snapshot, v View, changed bool) (*sdk.Result, error) {
	lines, err := snap.scope(v)
	if err != nil {
		return nil, err
	}
	w := cut(lines, v, s.m.opts.SnapshotBudget)
	info.Refs = snap.refs
	info.NextOffset, info.Remaining = w.next, w.leftRefs
	var b strings.Builder
	if lead != "" {
		b.WriteString(lead)
		b.WriteString("\n\n")
	}
	if changed {
		b.WriteString("The page has a new document since the snapshot you were paging through: this is a new snapshot, its lines numbered afresh.\n\n")
	}
	b.WriteString(header(info))
	b.WriteString("- Page Snapshot:\n```yaml\n")
	switch {
	case len(w.lines) > 0:
		b.WriteString(strings.Join(w.lines, "\n"))
	case v.Query != "":
		fmt.Fprintf(&b, "# nothing on the page matches %q", v.Query)
	case w.total > 0:
		fmt.Fprintf(&b, "# the snapshot has %d lines: offset %d is past its end", w.total, v.Offset)
	default:
		b.WriteString("# the page is empty")
	}
	b.WriteString("\n```")
	if w.next > 0 {
		b.WriteString("\n")
		b.WriteString(cutLine(w, v))
	}
	return &sdk.Result{Text: b.String(), Data: info}, nil
}

// withChanges returns a result that starts with lead and shows what an
// action changed on the current tab's page: the elements added, changed,
// moved or removed since the snapshot the session saw last of the same
// document (the others keep their refs), and the URL and title when they
// changed. A new document, a tab not seen before, or changes that would
// take more room than the snapshot get the snapshot instead.
func (s *Session) withChanges(ctx context.Context, lead string, info PageInfo) (*sdk.Result, error) {
	t := s.current()
	prev := t.snap
	if prev == nil || prev.gen != t.Gen() {
		return s.withSnapshot(ctx, lead, info)
	}
	snap, _, err := s.snapshotOf(ctx, t, false)
	if err != nil {
		return nil, err
	}
	s.pageInfo(ctx, t, &info)
	snap.url, snap.title = info.URL, info.Title
	changes := diffLines(prev.lines, snap.lines)
	if size(changes) >= size(cut(snap.lines, View{}, s.m.opts.SnapshotBudget).lines) {
		return s.answer(lead, info, snap, View{}, false)
	}
	info.Refs = snap.refs
	var b strings.Builder
	if lead != "" {
		b.WriteString(lead)
		b.WriteString("\n\n")
	}
	if info.URL != prev.url {
		fmt.Fprintf(&b, "- Page URL: %s\n", info.URL)
	}
	if info.Title != prev.title {
		fmt.Fprintf(&b, "- Page Title: %s\n", info.Title)
	}
	if info.Status >= 400 {
		fmt.Fprintf(&b, "- HTTP status: %d\n", info.Status)
	}
	if len(changes) == 0 {
		b.WriteString("- Page changes: none; the refs of the last snapshot stay valid.")
		return &sdk.Result{Text: b.String(), Data: info}, nil
	}
	b.WriteString("- Page changes (+ added, ~ changed, * moved, - removed; the rest as it was, refs too):\n```diff\n")
	b.WriteString(strings.Join(changes, "\n"))
	b.WriteString("\n```")
	return &sdk.Result{Text: b.String(), Data: info}, nil
}

// size is how many bytes lines take, one newline each.
func size(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	return n
}

// snapshotOf renders t's page, or with reuse returns the snapshot taken
// before when its document is still the tab's; changed says one was kept
// of another document.
func (s *Session) snapshotOf(ctx context.Context, t *Tab, reuse bool) (snap *snapshot, changed bool, err error) {
	gen := t.Gen()
	if reuse && t.snap != nil {
		if t.snap.gen == gen {
			return t.snap, false, nil
		}
		changed = true
	}
	lines, refs, err := s.snapshotLines(ctx, t, gen)
	if err != nil {
		return nil, false, err
	}
	t.snap = &snapshot{gen: gen, lines: lines, refs: refs}
	return t.snap, changed, nil
}

// tabURL is the URL of t's page, "" when the browser does not say.
func (s *Session) tabURL(ctx context.Context, t *Tab) string {
	if ti := s.targetInfo(ctx, t); ti != nil {
		return ti.URL
	}
	return ""
}

// pageInfo fills info's tab, URL and title.
func (s *Session) pageInfo(ctx context.Context, t *Tab, info *PageInfo) {
	info.Tab, info.Tabs = s.tabIndex(t), len(s.tabs)
	if ti := s.targetInfo(ctx, t); ti != nil {
		info.URL, info.Title = ti.URL, ti.Title
	}
}

// targetInfo is what the browser says of t's target; nil when it does
// not answer.
func (s *Session) targetInfo(ctx context.Context, t *Tab) *target.Info {
	a, cancel := s.bounded(ctx, s.rootCtx)
	defer cancel()
	res, err := chromedp.CallBrowser(a, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: t.ID()})
	if err != nil {
		return nil
	}
	return res.TargetInfo
}

func header(info PageInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- Page URL: %s\n", info.URL)
	fmt.Fprintf(&b, "- Page Title: %s\n", info.Title)
	if info.Status >= 400 {
		fmt.Fprintf(&b, "- HTTP status: %d\n", info.Status)
	}
	if info.Tabs > 1 {
		fmt.Fprintf(&b, "- Tab: %d of %d open (browser_tabs lists them)\n", info.Tab, info.Tabs)
	}
	return b.String()
}

// snapshotLines renders t's accessibility tree, document gen, as lines;
// every element shown gets a ref valid until t's document changes.
func (s *Session) snapshotLines(ctx context.Context, t *Tab, gen uint64) ([]string, int, error) {
	a, cancel := s.bounded(ctx, t.ctx)
	defer cancel()
	res, err := chromedp.Call(a, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		return nil, 0, fmt.Errorf("read the page's accessibility tree: %w", err)
	}
	nodes := s.withFrames(ctx, a, t, gen, res.Nodes)
	// A navigation that committed while the tree was read leaves refs
	// tagged with the old document: they are refused as stale, never
	// pointed at the wrong element.
	out := axtree.Render(nodes, func(node cdp.BackendNodeID) string {
		return s.refs.assign(t, gen, node)
	}, axtree.Options{MaxLines: maxSnapshotLines, Base: s.tabURL(ctx, t)})
	if out.Text == "" {
		return nil, 0, nil
	}
	return strings.Split(out.Text, "\n"), out.Refs, nil
}

// maxSnapshotLines bounds one snapshot kept for paging: far more than any
// answer shows (a page of the budget is a few hundred lines), few enough
// to keep (a few MB).
const maxSnapshotLines = 50_000

// maxFrames bounds how many iframes a snapshot opens.
const maxFrames = 16

// withFrames splices the trees of the page's iframes under their iframe
// nodes. Frames the page's process renders (same-site ones) come in with
// refs that work like any other. A cross-site frame runs in a process of
// its own: the tab attaches to its target and reads its tree there, and
// its nodes' refs name the frame too (frameNode).
func (s *Session) withFrames(ctx, a context.Context, t *Tab, gen uint64, nodes []*accessibility.Node) []*accessibility.Node {
	out := nodes
	frames := 0
	for _, n := range nodes {
		if n == nil || n.Ignored || n.BackendDOMNodeID == 0 || frames >= maxFrames {
			continue
		}
		if role := n.Role; role == nil || !strings.Contains(string(role.Value), "Iframe") {
			continue
		}
		d, err := chromedp.Call(a, dom.DescribeNode, dom.DescribeNodeParams{BackendNodeID: n.BackendDOMNodeID})
		if err != nil || d.Node == nil || d.Node.FrameID == "" {
			continue
		}
		slot := -1
		sub, err := chromedp.Call(a, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{FrameID: d.Node.FrameID})
		if err != nil || len(sub.Nodes) == 0 {
			// Another process renders it: its target has the frame's id.
			f, i := s.crossFrame(ctx, t, gen, target.ID(d.Node.FrameID), n.BackendDOMNodeID)
			if f == nil {
				continue
			}
			fa, cancel := s.bounded(ctx, f.ctx)
			sub, err = chromedp.Call(fa, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
			cancel()
			if err != nil || len(sub.Nodes) == 0 {
				continue
			}
			slot = i
		}
		frames++
		// Node ids are per document: prefix the frame's so they cannot
		// collide with the page's.
		prefix := fmt.Sprintf("f%d:", frames)
		var root accessibility.NodeID
		for _, c := range sub.Nodes {
			if c == nil {
				continue
			}
			cp := *c
			cp.NodeID = accessibility.NodeID(prefix + string(c.NodeID))
			if slot >= 0 {
				cp.BackendDOMNodeID = frameNode(slot, c.BackendDOMNodeID)
			}
			if c.ParentID == "" {
				if root == "" {
					root = cp.NodeID
				}
			} else {
				cp.ParentID = accessibility.NodeID(prefix + string(c.ParentID))
			}
			cp.ChildIDs = make([]accessibility.NodeID, len(c.ChildIDs))
			for i, id := range c.ChildIDs {
				cp.ChildIDs[i] = accessibility.NodeID(prefix + string(id))
			}
			out = append(out, &cp)
		}
		if root != "" {
			n.ChildIDs = append(n.ChildIDs, root)
		}
	}
	return out
}
