package tools

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/yagent/yagent/plugins/browser/session"
	"github.com/yagent/yagent/sdk"
)

// Version is the browser plugin's version.
const Version = "0.1.0"

// All returns the fourteen browser tools over m, sorted by name.
func All(m *session.Manager) []sdk.Tool {
	return []sdk.Tool{
		Click(m),
		Close(m),
		ConsoleMessages(m),
		Evaluate(m),
		Hover(m),
		Navigate(m),
		NavigateBack(m),
		PressKey(m),
		SelectOption(m),
		Snapshot(m),
		Tabs(m),
		TakeScreenshot(m),
		Type(m),
		WaitFor(m),
	}
}

// spec returns the Spec every browser tool shares: Effect browser, Serial,
// never ReadOnly.
func spec(name, brief, description string, schema json.RawMessage) sdk.Spec {
	return sdk.Spec{
		Name:        name,
		Description: strings.TrimSpace(description),
		Brief:       brief,
		InputSchema: schema,
		Effect:      sdk.EffectBrowser,
		Serial:      true,
	}
}

// schemaFor infers In's schema and lets edit refine it (enums, bounds)
// before it is frozen into the spec.
func schemaFor[In any](edit func(s *jsonschema.Schema)) json.RawMessage {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("browser tools: schema: %v", err))
	}
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	if edit != nil {
		edit(s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("browser tools: schema: %v", err))
	}
	return b
}

func bound(lo, hi float64) (*float64, *float64) { return &lo, &hi }

// element is the part of an input that names an element.
type element struct {
	Ref      string `json:"ref,omitempty" jsonschema:"A ref from the latest browser_snapshot, like e12. Give ref or selector."`
	Selector string `json:"selector,omitempty" jsonschema:"A CSS selector matching exactly one element."`
}

func (e element) target() session.Element {
	return session.Element{Ref: strings.TrimSpace(e.Ref), Selector: e.Selector}
}

// sentURL returns a url argument as the host sent it, to be used as it
// is: the host normalized it once and judged that value. One that is not
// in normalized form did not come through the host's guard and is refused,
// never completed here.
func sentURL(raw string) (string, error) {
	if u, err := sdk.NormalizeURL(raw); err != nil || u != raw {
		return "", sdk.Errorf(sdk.CodeInvalidInput, "url %q is not a full address; give it with its scheme, like https://example.com/page", raw)
	}
	return raw, nil
}

// webScheme reports whether u is an http, https or about URL, the schemes
// a tab may open without the host's guard having seen the URL.
func webScheme(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	switch strings.ToLower(p.Scheme) {
	case "http", "https", "about":
		return true
	}
	return false
}
