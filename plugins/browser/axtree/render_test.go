package axtree

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
)

// n builds an AX node: id, role, name, children; backend = id.
func n(id int, role, name string, children ...int) *accessibility.Node {
	node := &accessibility.Node{
		NodeID:           accessibility.NodeID(strconv.Itoa(id)),
		Role:             val(role),
		BackendDOMNodeID: cdp.BackendNodeID(id),
	}
	if name != "" {
		node.Name = val(name)
	}
	for _, c := range children {
		node.ChildIDs = append(node.ChildIDs, accessibility.NodeID(strconv.Itoa(c)))
	}
	return node
}

func val(s string) *accessibility.Value {
	b, _ := json.Marshal(s)
	return &accessibility.Value{Type: accessibility.ValueTypeString, Value: b}
}

func prop(name accessibility.PropertyName, raw string) *accessibility.Property {
	return &accessibility.Property{Name: name, Value: &accessibility.Value{Value: []byte(raw)}}
}

func tree(nodes ...*accessibility.Node) []*accessibility.Node {
	byID := map[accessibility.NodeID]*accessibility.Node{}
	for _, x := range nodes {
		byID[x.NodeID] = x
	}
	for _, x := range nodes {
		for _, c := range x.ChildIDs {
			byID[c].ParentID = x.NodeID
		}
	}
	return nodes
}

func refs(backend cdp.BackendNodeID) string { return "e" + strconv.Itoa(int(backend)) }

func TestRender(t *testing.T) {
	t.Parallel()
	heading := n(3, "heading", "Sign in", 4)
	heading.Properties = []*accessibility.Property{prop(accessibility.PropertyNameLevel, "1")}
	box := n(6, "checkbox", "Remember me")
	box.Properties = []*accessibility.Property{prop(accessibility.PropertyNameChecked, `"true"`), prop(accessibility.PropertyNameDisabled, "true")}
	field := n(7, "textbox", "Email", 8)
	field.Value = val("ada@example.com")
	ignored := n(2, "none", "", 3, 5, 6, 7, 9, 11, 13)
	ignored.Ignored = true
	long := strings.Repeat("x", 200)
	nodes := tree(
		n(1, "RootWebArea", "Title", 2),
		ignored,
		heading, n(4, "StaticText", "Sign in", 40), n(40, "InlineTextBox", "Sign in"),
		n(5, "generic", "", 50), n(50, "StaticText", "Plain  text\n here"),
		box,
		field, n(8, "generic", "", 80), n(80, "StaticText", "ada@example.com"),
		n(9, "list", "", 10), n(10, "listitem", "", 100, 101), n(100, "StaticText", "one"), n(101, "link", long),
		n(11, "paragraph", "", 12), n(12, "StaticText", `say "hi"`),
		n(13, "button", "Go", 14), n(14, "StaticText", "Go"),
	)
	got := Render(nodes, refs, Options{})
	want := strings.Join([]string{
		`- heading "Sign in" [level=1] [ref=e3]`,
		`- text: Plain text here`,
		`- checkbox "Remember me" [checked] [disabled] [ref=e6]`,
		`- textbox "Email" [ref=e7]: ada@example.com`,
		`- list [ref=e9]:`,
		`  - listitem [ref=e10]:`,
		`    - text: one`,
		`    - link "` + strings.Repeat("x", DefaultMaxName) + `…" [ref=e101]`,
		`- paragraph [ref=e11]: say "hi"`,
		`- button "Go" [ref=e13]`,
	}, "\n")
	if got.Text != want {
		t.Fatalf("Render:\n%s\nwant:\n%s", got.Text, want)
	}
	if got.Refs != 8 || got.Truncated {
		t.Fatalf("Render: %d refs, truncated %v; want 8, false", got.Refs, got.Truncated)
	}
}

func TestRenderCapsLines(t *testing.T) {
	t.Parallel()
	root := n(1, "RootWebArea", "")
	nodes := []*accessibility.Node{root}
	for i := 2; i < 12; i++ {
		root.ChildIDs = append(root.ChildIDs, accessibility.NodeID(strconv.Itoa(i)))
		nodes = append(nodes, n(i, "button", "b"+strconv.Itoa(i)))
	}
	got := Render(tree(nodes...), refs, Options{MaxLines: 4})
	lines := strings.Split(got.Text, "\n")
	if len(lines) != 5 || !got.Truncated || got.Refs != 4 || !strings.Contains(lines[4], "6 more elements not shown") {
		t.Fatalf("Render with MaxLines 4: truncated %v, refs %d:\n%s", got.Truncated, got.Refs, got.Text)
	}
}

func TestRenderSurvivesMalformedTrees(t *testing.T) {
	t.Parallel()
	a := n(1, "RootWebArea", "", 2)
	b := n(2, "group", "g", 1, 99) // a cycle and a missing child
	got := Render([]*accessibility.Node{a, b, nil}, nil, Options{})
	if !strings.HasPrefix(got.Text, `- group "g"`) {
		t.Fatalf("Render of a cycle: %q", got.Text)
	}
	if empty := Render(nil, refs, Options{}); empty.Text != "" || empty.Refs != 0 {
		t.Fatalf("Render(nil) = %+v", empty)
	}
}
