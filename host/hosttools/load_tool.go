package hosttools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/sdk"
)

// CatalogLine is one deferred tool in load_tool's description.
type CatalogLine struct {
	Name, Brief string
	// Group, when set, says what the tool's family is for: the tools
	// of one Group, in a row, share a line with it in place of their
	// briefs.
	Group string
}

// LoadedTool is one schema load_tool hands back.
type LoadedTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// UnknownTool is a name load_tool could not find, with the names it resembles.
type UnknownTool struct {
	Name        string   `json:"name"`
	Suggestions []string `json:"suggestions,omitempty"`
}

// LeftTool is a tool a query matched and load_tool did not load, and why.
type LeftTool struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Loaded is what one load_tool call found and loaded.
type Loaded struct {
	Tools   []LoadedTool  `json:"tools"`
	Unknown []UnknownTool `json:"unknown"`
	// Matched is how many deferred tools the query matched.
	Matched int `json:"matched,omitempty"`
	// Left are the matches not loaded, in rank order.
	Left []LeftTool `json:"left,omitempty"`
}

// Loader is what load_tool needs from the surface: find tools by name or
// keyword and mark them loaded for the session.
type Loader interface {
	LoadTools(sess *session.Session, names []string, query string) Loaded
}

// LoadTool returns load_tool, whose description lists catalog as
// "name: brief" lines, and a run of two or more tools of one Group as one
// line, "prefix_{a,b}: group" (names sharing a prefix up to an underscore)
// or "a, b: group"; its executor asks l.
func LoadTool(l Loader, catalog []CatalogLine) (sdk.Spec, adapter.Executor) {
	var b strings.Builder
	b.WriteString("Load deferred tools by `names` or keyword `query`; they stay listed.")
	if len(catalog) > 0 {
		b.WriteString(" Deferred:")
	}
	for i := 0; i < len(catalog); {
		c := catalog[i]
		j := i + 1
		for c.Group != "" && j < len(catalog) && catalog[j].Group == c.Group {
			j++
		}
		if j == i+1 {
			fmt.Fprintf(&b, "\n%s: %s", c.Name, c.Brief)
			i++
			continue
		}
		names := make([]string, 0, j-i)
		for _, g := range catalog[i:j] {
			names = append(names, g.Name)
		}
		fmt.Fprintf(&b, "\n%s: %s", groupNames(names), c.Group)
		i = j
	}
	spec := bind(toolspec.LoadTool, sdk.Spec{
		Description: b.String(),
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"names":{"type":"array","items":{"type":"string"}},` +
			`"query":{"type":"string"}` +
			`},"additionalProperties":false}`),
	})
	exec := adapter.ExecutorFunc(func(ctx context.Context, _ sdk.CallInfo, input json.RawMessage, _ func(sdk.Progress)) (*sdk.Result, error) {
		var in struct {
			Names []string `json:"names"`
			Query string   `json:"query"`
		}
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, sdk.Errorf(sdk.CodeInvalidInput, "load_tool input does not decode: %v", err)
		}
		if len(in.Names) == 0 && strings.TrimSpace(in.Query) == "" {
			return nil, sdk.Errorf(sdk.CodeInvalidInput, "give names (tool names from the catalog in this tool's description) or a query (keywords)")
		}
		sess := session.FromContext(ctx)
		if sess == nil {
			sess = session.New("")
		}
		got := l.LoadTools(sess, in.Names, in.Query)
		tools := got.Tools
		var t strings.Builder
		for _, lt := range tools {
			fmt.Fprintf(&t, "## %s\n%s\nInput schema: %s\n\n", lt.Name, lt.Description, lt.InputSchema)
		}
		for _, u := range got.Unknown {
			fmt.Fprintf(&t, "No tool named %q", u.Name)
			if len(u.Suggestions) > 0 {
				fmt.Fprintf(&t, " (did you mean %s?)", strings.Join(u.Suggestions, ", "))
			}
			t.WriteString(".\n")
		}
		if len(got.Left) > 0 {
			fmt.Fprintf(&t, "The query matched %d deferred tools; %d were not loaded:\n", got.Matched, len(got.Left))
			for _, lt := range got.Left {
				fmt.Fprintf(&t, "- %s: %s\n", lt.Name, lt.Reason)
			}
			t.WriteString("\n")
		}
		data := got
		if len(tools) == 0 {
			msg := t.String()
			if in.Query != "" && got.Matched == 0 {
				msg += fmt.Sprintf("No deferred tool matches %q. The catalog in load_tool's description lists every deferred tool.", in.Query)
			}
			return nil, &sdk.ToolError{Code: sdk.CodeNotFound, Message: strings.TrimSpace(msg), Data: data}
		}
		t.WriteString("These tools are now loaded: call them directly.")
		return &sdk.Result{Text: t.String(), Data: data}, nil
	})
	return spec, exec
}

// groupNames writes names as prefix_{a,b,...} when they share a prefix that
// ends in an underscore and leaves each a non-empty rest, else as a list.
func groupNames(names []string) string {
	if len(names) > 1 {
		prefix := names[0]
		for _, n := range names[1:] {
			for !strings.HasPrefix(n, prefix) {
				prefix = prefix[:len(prefix)-1]
			}
		}
		prefix = prefix[:strings.LastIndexByte(prefix, '_')+1]
		rests := make([]string, len(names))
		for i, n := range names {
			rests[i] = n[len(prefix):]
		}
		if prefix != "" && !slices.Contains(rests, "") {
			return prefix + "{" + strings.Join(rests, ",") + "}"
		}
	}
	return strings.Join(names, ", ")
}
