package tools

import (
	"context"
	_ "embed"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// TabsName is the name of the tool that manages tabs.
const TabsName = "browser_tabs"

//go:embed tabs.md
var tabsDescription string

// Tab actions.
const (
	tabsList   = "list"
	tabsNew    = "new"
	tabsSelect = "select"
	tabsClose  = "close"
)

type tabsInput struct {
	Action string `json:"action"`
	Index  *int   `json:"index,omitempty"`
	URL    string `json:"url,omitempty"`
}

// Tabs returns browser_tabs.
func Tabs(m *session.Manager) sdk.Tool {
	schema := schemaFor[tabsInput](func(s *jsonschema.Schema) {
		s.Properties["action"].Enum = []any{tabsList, tabsNew, tabsSelect, tabsClose}
		idx := s.Properties["index"]
		idx.Types, idx.Type = nil, "integer"
		idx.Minimum = new(float64)
	})
	s := spec(TabsName, "List, open, select or close tabs.", tabsDescription, schema)
	// url has the role url: the host's guard judges the address a new tab
	// opens as it judges browser_navigate's, and sends it normalized.
	s.Roles = map[string]sdk.Role{"url": sdk.RoleURL}
	return sdk.NewTool(s,
		func(ctx context.Context, in tabsInput) (*sdk.Result, error) {
			var url string
			switch in.Action {
			case tabsList, tabsClose:
			case tabsNew:
				if in.URL != "" {
					u, err := sentURL(in.URL)
					if err != nil {
						return nil, err
					}
					if !webScheme(u) {
						return nil, sdk.Errorf(sdk.CodeInvalidInput, "a new tab opens only http, https or about: addresses; open the tab without url, then use browser_navigate for %s", in.URL)
					}
					url = u
				}
			case tabsSelect:
				if in.Index == nil {
					return nil, sdk.Errorf(sdk.CodeInvalidInput, "select needs index: the tab's number from browser_tabs with action list")
				}
			default:
				return nil, sdk.Errorf(sdk.CodeInvalidInput, "action %q is not one of list, new, select, close", in.Action)
			}
			return m.Do(ctx, func(ctx context.Context, s *session.Session) (*sdk.Result, error) {
				switch in.Action {
				case tabsNew:
					return s.NewTab(ctx, url)
				case tabsSelect:
					return s.SelectTab(ctx, *in.Index)
				case tabsClose:
					i := -1
					if in.Index != nil {
						i = *in.Index
					}
					return s.CloseTab(ctx, i)
				}
				return s.Tabs(ctx)
			})
		})
}
