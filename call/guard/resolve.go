package guard

import (
	"fmt"
	"maps"
	"reflect"

	"github.com/yagent/yagent/sdk"
)

// mapStrings applies f to v when it is a string, or to each string of an
// array (other elements kept), and returns the result; anything else is
// returned as it is.
func mapStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case string:
		return f(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			if s, ok := e.(string); ok {
				out[i] = f(s)
			} else {
				out[i] = e
			}
		}
		return out
	}
	return v
}

// withResolved returns args with each parameter of sent replaced by its
// resolved value, or nil when no value changed.
func withResolved(args, sent map[string]any) map[string]any {
	var out map[string]any
	for p, val := range sent {
		old, ok := args[p]
		if !ok || reflect.DeepEqual(old, val) {
			continue
		}
		if out == nil {
			out = maps.Clone(args)
		}
		out[p] = val
	}
	return out
}

// named shows a path as the model gave it when that differs from where it
// resolves, so the model recognizes its own argument.
func named(given, resolved string) string {
	if given == resolved {
		return resolved
	}
	return fmt.Sprintf("%q (%s)", given, resolved)
}

// judgeURL normalizes a url argument the one way plugins rely on (a bare
// host gets its scheme), judges that URL, and returns it to be sent.
func (g *WorkspaceGuard) judgeURL(v *verdict, param, raw string) string {
	u, err := sdk.NormalizeURL(raw)
	if err != nil {
		v.ask(fmt.Sprintf("%s: %v", param, err), "")
		return raw
	}
	g.checkURL(v, u)
	return u
}
