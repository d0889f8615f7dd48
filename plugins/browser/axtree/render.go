package axtree

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
)

// Options tune Render.
type Options struct {
	// MaxLines caps the outline; 0 means DefaultMaxLines. The cut is said
	// on the last line.
	MaxLines int
	// MaxName caps each name and value, in characters; 0 means
	// DefaultMaxName.
	MaxName int
	// Base is the page's URL: a link's target on the same origin is shown
	// relative to it (/article/1), any other in full; "" shows every
	// target in full.
	Base string
}

// Defaults of Options.
const (
	DefaultMaxLines = 4000
	DefaultMaxName  = 160
)

// Outline is a rendered tree.
type Outline struct {
	// Text is the outline, one line per element, without a trailing newline.
	Text string
	// Refs is how many refs the outline hands out.
	Refs int
	// Truncated says the outline was cut at MaxLines.
	Truncated bool
}

// RefFunc returns the ref of the DOM node backend ("e12"); the same node
// should get the same ref for as long as its document lives.
type RefFunc func(backend cdp.BackendNodeID) string

// roles whose nodes are never shown, nor their subtrees.
var dropped = map[string]bool{"InlineTextBox": true, "LineBreak": true, "ListMarker": true}

// roles that only group: shown only when they have a name, else their
// children take their place.
var grouping = map[string]bool{"generic": true, "none": true, "presentation": true, "": true, "GenericContainer": true, "Section": true, "MenuListPopup": true, "LabelText": true,
	// A fieldset's legend names its group already: its words show once.
	"Legend": true}

// roles whose subtree is their own inner editor: their value is shown
// instead of their children.
var leaves = map[string]bool{"textbox": true, "searchbox": true, "spinbutton": true, "slider": true,
	// Date, time and color pickers: one line with their value, not their
	// parts (a spinbutton per field, a picker button).
	"Date": true, "DateTime": true, "InputTime": true, "ColorWell": true}

// roles that carry a value worth showing after the colon.
var valued = map[string]bool{"textbox": true, "searchbox": true, "combobox": true, "spinbutton": true, "slider": true, "progressbar": true, "scrollbar": true,
	"Date": true, "DateTime": true, "InputTime": true, "ColorWell": true}

// Render renders nodes (in any order; the root is the node without a
// parent) as an outline, asking ref for the ref of every element shown.
func Render(nodes []*accessibility.Node, ref RefFunc, opts Options) Outline {
	if opts.MaxLines <= 0 {
		opts.MaxLines = DefaultMaxLines
	}
	if opts.MaxName <= 0 {
		opts.MaxName = DefaultMaxName
	}
	r := &renderer{byID: make(map[accessibility.NodeID]*accessibility.Node, len(nodes)), ref: ref, opts: opts}
	if b, err := url.Parse(opts.Base); err == nil && b.Host != "" {
		r.base = b
	}
	var root *accessibility.Node
	for _, n := range nodes {
		if n == nil {
			continue
		}
		r.byID[n.NodeID] = n
		if n.ParentID == "" && root == nil {
			root = n
		}
	}
	if root != nil {
		r.children(root, 0, r.name(root))
	}
	if r.skipped > 0 {
		r.lines = append(r.lines, fmt.Sprintf("- … %d more elements not shown (the page is long: use browser_wait_for, browser_evaluate or a CSS selector for what lies below)", r.skipped))
	}
	return Outline{Text: strings.Join(r.lines, "\n"), Refs: r.refs, Truncated: r.skipped > 0}
}

type renderer struct {
	byID    map[accessibility.NodeID]*accessibility.Node
	base    *url.URL // Options.Base, nil when none
	ref     RefFunc
	opts    Options
	lines   []string
	refs    int
	skipped int
	seen    int // guards against cycles in a malformed tree
}

// children renders n's children at depth; parentName is the name of the
// nearest shown ancestor, so a text repeating it is not shown twice.
func (r *renderer) children(n *accessibility.Node, depth int, parentName string) {
	for _, id := range n.ChildIDs {
		if c := r.byID[id]; c != nil {
			r.node(c, depth, parentName)
		}
	}
}

func (r *renderer) node(n *accessibility.Node, depth int, parentName string) {
	r.seen++
	if r.seen > 4*len(r.byID)+16 {
		return
	}
	role := valueString(n.Role)
	if dropped[role] {
		return
	}
	name := r.name(n)
	if n.Ignored || (grouping[role] && name == "") || role == "RootWebArea" || role == "WebArea" {
		r.children(n, depth, parentName)
		return
	}
	if len(r.lines) >= r.opts.MaxLines {
		r.skipped++
		r.children(n, depth, parentName) // only counts
		return
	}
	indent := strings.Repeat("  ", depth)
	if role == "StaticText" {
		if name != "" && name != parentName && !strings.Contains(parentName, name) {
			r.lines = append(r.lines, indent+"- text: "+name)
		}
		return
	}

	var b strings.Builder
	b.WriteString(indent)
	b.WriteString("- ")
	b.WriteString(displayRole(role))
	if name != "" {
		b.WriteString(" ")
		b.WriteString(quote(name))
	}
	for _, p := range states(n) {
		b.WriteString(" [")
		b.WriteString(p)
		b.WriteString("]")
	}
	if n.BackendDOMNodeID != 0 && r.ref != nil {
		if ref := r.ref(n.BackendDOMNodeID); ref != "" {
			b.WriteString(" [ref=")
			b.WriteString(ref)
			b.WriteString("]")
			r.refs++
		}
	}
	if role == "link" {
		if to := r.target(n); to != "" {
			b.WriteString(" → ")
			b.WriteString(to)
		}
	}
	shown := name
	if valued[role] {
		if v := r.clip(collapse(valueString(n.Value))); v != "" && v != name {
			b.WriteString(": ")
			b.WriteString(v)
			shown += " " + v
		}
	}
	at := len(r.lines)
	r.lines = append(r.lines, b.String())
	if leaves[role] {
		return
	}
	r.children(n, depth+1, shown)
	switch kids := r.lines[at+1:]; {
	case len(kids) == 1 && strings.HasPrefix(kids[0], indent+"  - text: ") && !valued[role]:
		// A lone text child goes on its parent's line.
		r.lines[at] += ": " + strings.TrimPrefix(kids[0], indent+"  - text: ")
		r.lines = r.lines[:at+1]
	case len(kids) > 0 && !valued[role]:
		r.lines[at] += ":"
	}
}

// target is where link n leads, as short as it reads unambiguously: the
// path, query and fragment on the page's own origin, the whole URL
// elsewhere; clipped like a name.
func (r *renderer) target(n *accessibility.Node) string {
	var raw string
	for _, p := range n.Properties {
		if p != nil && p.Name == accessibility.PropertyNameURL && p.Value != nil {
			raw = valueString(p.Value)
			break
		}
	}
	if raw == "" {
		return ""
	}
	if u, err := url.Parse(raw); err == nil && r.base != nil && u.Scheme == r.base.Scheme && u.Host == r.base.Host && u.User == nil {
		rel := u.EscapedPath()
		if rel == "" {
			rel = "/"
		}
		if u.RawQuery != "" {
			rel += "?" + u.RawQuery
		}
		if u.Fragment != "" {
			rel += "#" + u.EscapedFragment()
		}
		raw = rel
	}
	return r.clip(raw)
}

// name is n's accessible name, whitespace collapsed and clipped.
func (r *renderer) name(n *accessibility.Node) string {
	return r.clip(collapse(valueString(n.Name)))
}

func (r *renderer) clip(s string) string {
	if utf8.RuneCountInString(s) <= r.opts.MaxName {
		return s
	}
	rs := []rune(s)
	return string(rs[:r.opts.MaxName]) + "…"
}

// displayRole names Chrome's internal roles the way ARIA does.
func displayRole(role string) string {
	switch role {
	case "Iframe", "IframePresentational":
		return "iframe"
	case "Canvas":
		return "canvas"
	case "Pre":
		return "pre"
	case "LabelText":
		return "label"
	case "Date":
		return "date"
	case "DateTime":
		return "datetime"
	case "InputTime":
		return "time"
	case "ColorWell":
		return "color"
	case "DescriptionList":
		return "list"
	case "Abbr":
		return "abbr"
	}
	return role
}

// states lists the properties worth showing: [checked], [disabled],
// [expanded], [level=2], ...
func states(n *accessibility.Node) []string {
	var out []string
	for _, p := range n.Properties {
		if p == nil || p.Value == nil {
			continue
		}
		raw := strings.TrimSpace(string(p.Value.Value))
		switch p.Name {
		case accessibility.PropertyNameChecked, accessibility.PropertyNamePressed:
			switch raw {
			case "true", `"true"`:
				out = append(out, string(p.Name))
			case `"mixed"`:
				out = append(out, string(p.Name)+"=mixed")
			}
		case accessibility.PropertyNameDisabled, accessibility.PropertyNameSelected,
			accessibility.PropertyNameRequired, accessibility.PropertyNameReadonly, accessibility.PropertyNameFocused:
			if raw == "true" {
				out = append(out, string(p.Name))
			}
		case accessibility.PropertyNameExpanded:
			if raw == "true" {
				out = append(out, "expanded")
			} else if raw == "false" {
				out = append(out, "collapsed")
			}
		case accessibility.PropertyNameLevel:
			if role := valueString(n.Role); (role == "heading" || role == "treeitem") && raw != "" && raw != "0" {
				out = append(out, "level="+raw)
			}
		}
	}
	return out
}

// valueString decodes an AX value to text: strings as they are, other JSON
// (numbers, booleans) as written.
func valueString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(v.Value, &s); err == nil {
		return s
	}
	return strings.TrimSpace(string(v.Value))
}

// collapse folds runs of whitespace (newlines included) into one space.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// quote writes s in double quotes, escaping only what would break the line.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}
