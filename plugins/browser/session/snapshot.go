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
}

// Snapshot returns the current tab as an accessibility outline with a ref
// per element.
func (s *Session) Snapshot(ctx context.Context) (*sdk.Result, error) {
	return s.withSnapshot(ctx, "", PageInfo{})
}

// withSnapshot returns a result that starts with lead and shows the
// current tab's snapshot.
func (s *Session) withSnapshot(ctx context.Context, lead string, info PageInfo) (*sdk.Result, error) {
	t := s.current()
	text, refs, err := s.snapshotText(ctx, t)
	if err != nil {
		return nil, err
	}
	info.Refs = refs
	s.pageInfo(ctx, t, &info)
	var b strings.Builder
	if lead != "" {
		b.WriteString(lead)
		b.WriteString("\n\n")
	}
	b.WriteString(header(info))
	b.WriteString("- Page Snapshot:\n```yaml\n")
	b.WriteString(text)
	b.WriteString("\n```")
	return &sdk.Result{Text: b.String(), Data: info}, nil
}

// pageInfo fills info's tab, URL and title.
func (s *Session) pageInfo(ctx context.Context, t *Tab, info *PageInfo) {
	info.Tab, info.Tabs = s.tabIndex(t), len(s.tabs)
	a, cancel := s.bounded(ctx, s.rootCtx)
	defer cancel()
	if res, err := chromedp.CallBrowser(a, target.GetTargetInfo, target.GetTargetInfoParams{TargetID: t.ID()}); err == nil && res.TargetInfo != nil {
		info.URL, info.Title = res.TargetInfo.URL, res.TargetInfo.Title
	}
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

// snapshotText renders t's accessibility tree; every element shown gets a
// ref valid until t's document changes.
func (s *Session) snapshotText(ctx context.Context, t *Tab) (string, int, error) {
	a, cancel := s.bounded(ctx, t.ctx)
	defer cancel()
	gen := t.Gen()
	res, err := chromedp.Call(a, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		return "", 0, fmt.Errorf("read the page's accessibility tree: %w", err)
	}
	nodes := withFrames(a, res.Nodes)
	// A navigation that committed while the tree was read leaves refs
	// tagged with the old document: they are refused as stale, never
	// pointed at the wrong element.
	out := axtree.Render(nodes, func(node cdp.BackendNodeID) string {
		return s.refs.assign(t, gen, node)
	}, axtree.Options{})
	text := out.Text
	if text == "" {
		text = "# the page is empty"
	}
	return text, out.Refs, nil
}

// maxFrames bounds how many iframes a snapshot opens.
const maxFrames = 16

// withFrames splices the trees of the page's iframes under their iframe
// nodes. Frames the page's process renders (same-site ones) come in with
// refs that work like any other; a cross-site frame runs elsewhere and
// stays an empty iframe line.
func withFrames(a context.Context, nodes []*accessibility.Node) []*accessibility.Node {
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
		sub, err := chromedp.Call(a, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{FrameID: d.Node.FrameID})
		if err != nil || len(sub.Nodes) == 0 {
			continue
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
