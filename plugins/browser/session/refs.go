package session

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"

	"github.com/yagent/yagent/sdk"
)

// CodeStaleRef is the error code of a ref that no longer points into the
// page: from an older snapshot, another tab, or an element that is gone.
const CodeStaleRef = "stale_ref"

// refs hands out element refs (e1, e2, ...) and maps them back to DOM
// nodes. Numbers are never reused within a session, so a ref from an
// older document cannot name an element of the new one: within one
// document an element keeps its ref across snapshots; a new document
// (navigation, reload) drops every ref of the tab.
type refs struct {
	last  int
	byRef map[string]refEntry
	byTab map[*Tab]*tabRefs
}

type refEntry struct {
	tab  *Tab
	gen  uint64
	node cdp.BackendNodeID
}

type tabRefs struct {
	gen    uint64
	byNode map[cdp.BackendNodeID]string
}

func newRefs() *refs {
	return &refs{byRef: map[string]refEntry{}, byTab: map[*Tab]*tabRefs{}}
}

// assign returns the ref of node in tab's document gen, handing out a new
// one when it has none.
func (r *refs) assign(t *Tab, gen uint64, node cdp.BackendNodeID) string {
	tr := r.byTab[t]
	if tr == nil || tr.gen != gen {
		r.forget(t)
		tr = &tabRefs{gen: gen, byNode: map[cdp.BackendNodeID]string{}}
		r.byTab[t] = tr
	}
	if ref, ok := tr.byNode[node]; ok {
		return ref
	}
	r.last++
	ref := "e" + strconv.Itoa(r.last)
	tr.byNode[node] = ref
	r.byRef[ref] = refEntry{tab: t, gen: gen, node: node}
	return ref
}

// forget drops every ref of tab.
func (r *refs) forget(t *Tab) {
	tr := r.byTab[t]
	if tr == nil {
		return
	}
	for _, ref := range tr.byNode {
		delete(r.byRef, ref)
	}
	delete(r.byTab, t)
}

// resolve returns the node ref names in cur, the current tab, or a
// *sdk.ToolError telling the model what to do.
func (r *refs) resolve(ref string, cur *Tab, tabIndex func(*Tab) int) (cdp.BackendNodeID, error) {
	ref = strings.TrimSpace(ref)
	n, ok := parseRef(ref)
	if !ok {
		return 0, sdk.Errorf(sdk.CodeInvalidInput,
			"ref %q is not a ref: refs look like e12 and come from the latest browser_snapshot (to use a CSS selector, pass it as selector instead)", ref)
	}
	e, ok := r.byRef[ref]
	switch {
	case !ok && n <= r.last:
		return 0, staleRef("ref %s is from an older snapshot: the page has changed since (a navigation or reload). Call browser_snapshot and use a ref from the new snapshot", ref)
	case !ok:
		return 0, staleRef("ref %s was never handed out in this session. Call browser_snapshot and use a ref from it", ref)
	case e.tab != cur:
		if i := tabIndex(e.tab); i >= 0 {
			return 0, staleRef("ref %s belongs to tab %d, not the current tab. Select that tab with browser_tabs, or call browser_snapshot for a ref in this one", ref, i)
		}
		return 0, staleRef("ref %s belongs to a tab that is closed. Call browser_snapshot and use a ref from it", ref)
	case e.gen != cur.Gen():
		return 0, staleRef("ref %s is from an older snapshot: the page has changed since (a navigation or reload). Call browser_snapshot and use a ref from the new snapshot", ref)
	}
	return e.node, nil
}

func parseRef(ref string) (int, bool) {
	digits, ok := strings.CutPrefix(ref, "e")
	if !ok || digits == "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil && n > 0
}

func staleRef(format string, args ...any) *sdk.ToolError {
	return &sdk.ToolError{Code: CodeStaleRef, Message: fmt.Sprintf(format, args...)}
}
