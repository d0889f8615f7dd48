package adapter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/yagent/yagent/sdk"
)

// repairArgs returns a repaired copy of args and the repairs made: the
// narrow, schema-guided fixes of shapes models get wrong. It never guesses
// beyond the schema's word; the caller re-validates and gives up when the
// result is still wrong.
func repairArgs(doc map[string]any, roles map[string]sdk.Role, args map[string]any) (map[string]any, []Repair) {
	out, _ := deepCopy(args).(map[string]any)
	r := &repairer{roles: roles}
	r.object(doc, out, nil)
	return out, r.repairs
}

type repairer struct {
	roles   map[string]sdk.Role
	repairs []Repair
}

func (r *repairer) add(kind string, loc []string, format string, args ...any) {
	r.repairs = append(r.repairs, Repair{Kind: kind, Field: fieldPath(loc), Detail: fmt.Sprintf(format, args...)})
}

func (r *repairer) object(doc map[string]any, obj map[string]any, loc []string) {
	props := properties(doc)
	req := required(doc)
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		ps, ok := props[key].(map[string]any)
		if !ok {
			continue // unknown or unconstrained: validation speaks
		}
		at := append(slices.Clone(loc), key)
		types := schemaTypes(ps)
		isPath := len(loc) == 0 && isPathParam(key, r.roles[key])
		switch v := obj[key].(type) {
		case nil:
			if len(types) > 0 && !slices.Contains(types, "null") && !slices.Contains(req, key) {
				delete(obj, key)
				r.add(RepairNullOptionalOmitted, at, "null given for an optional field; omitted")
			}
		case string:
			if nv, ok := r.scalar(ps, types, v, at); ok {
				obj[key] = nv
				if arr, isArr := nv.([]any); isArr {
					r.array(ps, arr, at, isPath)
				}
			} else if isPath {
				obj[key] = r.path(v, at)
			}
		case map[string]any:
			r.object(ps, v, at)
		case []any:
			r.array(ps, v, at, isPath)
		}
	}
}

func (r *repairer) array(doc map[string]any, arr []any, loc []string, isPath bool) {
	items, _ := doc["items"].(map[string]any)
	for i, el := range arr {
		at := append(slices.Clone(loc), strconv.Itoa(i))
		switch v := el.(type) {
		case map[string]any:
			if items != nil {
				r.object(items, v, at)
			}
		case string:
			if isPath {
				arr[i] = r.path(v, at)
			}
		}
	}
}

// scalar repairs a string given where types want something else.
func (r *repairer) scalar(doc map[string]any, types []string, s string, at []string) (any, bool) {
	if len(types) == 0 || slices.Contains(types, "string") {
		return nil, false
	}
	trimmed := strings.TrimSpace(s)
	switch {
	case slices.Contains(types, "array"):
		if strings.HasPrefix(trimmed, "[") {
			dec := json.NewDecoder(strings.NewReader(trimmed))
			dec.UseNumber()
			var arr []any
			if err := dec.Decode(&arr); err == nil && !dec.More() {
				r.add(RepairStringifiedArray, at, "a JSON array given as a string; parsed")
				return arr, true
			}
		}
		items, _ := doc["items"].(map[string]any)
		if it := schemaTypes(items); len(it) == 0 || slices.Contains(it, "string") {
			r.add(RepairBareStringToArray, at, "a single string given for an array; wrapped")
			return []any{s}, true
		}
	case slices.Contains(types, "boolean"):
		switch strings.ToLower(trimmed) {
		case "true":
			r.add(RepairSemanticBooleanString, at, "%q converted to true", s)
			return true, true
		case "false":
			r.add(RepairSemanticBooleanString, at, "%q converted to false", s)
			return false, true
		}
	case slices.Contains(types, "integer"), slices.Contains(types, "number"):
		if !isJSONNumber(trimmed) {
			break
		}
		if _, err := strconv.ParseInt(trimmed, 10, 64); err != nil && !slices.Contains(types, "number") {
			break
		}
		r.add(RepairSemanticBooleanString, at, "%q converted to a number", s)
		return json.Number(trimmed), true
	}
	return nil, false
}

// autolink matches a Markdown link, as models write a path that a chat
// renderer turned into one: [README.md](http://README.md).
var autolink = regexp.MustCompile(`\[([^\[\]()]+)\]\(([^()\s]+)\)`)

func (r *repairer) path(s string, at []string) string {
	if !strings.Contains(s, "](") {
		return s // no link to read: the path of nearly every call
	}
	changed := false
	out := autolink.ReplaceAllStringFunc(s, func(m string) string {
		sub := autolink.FindStringSubmatch(m)
		text, target := sub[1], sub[2]
		for _, scheme := range []string{"http://", "https://", "mailto:"} {
			target = strings.TrimPrefix(target, scheme)
		}
		if target != text {
			return m
		}
		changed = true
		return text
	})
	if changed {
		r.add(RepairMarkdownAutolinkPath, at, "%q read as %q", s, out)
	}
	return out
}

func isJSONNumber(s string) bool {
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
		return false
	}
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
}

func isPathParam(name string, role sdk.Role) bool {
	if role == sdk.RolePathRead || role == sdk.RolePathWrite {
		return true
	}
	n := strings.ToLower(name)
	return n == "path" || n == "paths" || strings.HasSuffix(n, "_path") || strings.HasSuffix(n, "_paths")
}

func deepCopy(v any) any {
	switch c := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(c))
		for k, e := range c {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(c))
		for i, e := range c {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}

// encodeArgs turns args back into JSON, keeping numbers as written and
// leaving <, > and & alone.
func encodeArgs(args map[string]any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
