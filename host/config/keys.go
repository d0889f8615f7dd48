package config

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/yagent/yagent/internal/suggest"
)

// kind is the shape a key's value must have.
type kind int

const (
	kindString kind = iota
	kindInt
	kindBool
	kindStrings     // list of strings
	kindStringMap   // map of name -> scalar (kept as a string)
	kindStringMaps  // map of name -> kindStringMap
	kindStruct      // object with known keys
	kindStructSlice // list of objects with known keys
)

// shape describes the keys a profile file may hold, derived from the koanf
// tags of Profile so the two never drift.
type shape struct {
	kind   kind
	fields map[string]*shape // kindStruct, kindStructSlice
}

// profileShape is the shape of a whole profile file.
func profileShape() *shape { return shapeOf(reflect.TypeFor[Profile]()) }

// configShape is the shape of a config.yaml: a partial profile without a
// name of its own, plus the base profile it selects.
func configShape() *shape {
	s := profileShape()
	delete(s.fields, keyName)
	delete(s.fields, keyDescription)
	s.fields[keyProfile] = &shape{kind: kindString}
	return s
}

func shapeOf(t reflect.Type) *shape {
	switch t.Kind() {
	case reflect.String:
		return &shape{kind: kindString}
	case reflect.Int:
		return &shape{kind: kindInt}
	case reflect.Bool:
		return &shape{kind: kindBool}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			return &shape{kind: kindStructSlice, fields: shapeOf(t.Elem()).fields}
		}
		if t.Elem().Kind() == reflect.String {
			return &shape{kind: kindStrings}
		}
	case reflect.Map:
		if t.Elem().Kind() == reflect.String {
			return &shape{kind: kindStringMap}
		}
		if t.Elem().Kind() == reflect.Map && t.Elem().Elem().Kind() == reflect.String {
			return &shape{kind: kindStringMaps}
		}
	case reflect.Struct:
		s := &shape{kind: kindStruct, fields: map[string]*shape{}}
		for f := range t.Fields() {
			tag, _, _ := strings.Cut(f.Tag.Get("koanf"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			s.fields[tag] = shapeOf(f.Type)
		}
		return s
	}
	panic(fmt.Sprintf("config: profile field type %s has no shape", t))
}

// checkKeys walks v against s and returns one *KeyError per unknown key or
// value of the wrong shape, sorted by key. src names the layer.
func checkKeys(src string, v map[string]any, s *shape) []error {
	var errs []error
	checkObject(src, "", v, s.fields, &errs)
	sort.SliceStable(errs, func(i, j int) bool {
		return errs[i].(*KeyError).Key < errs[j].(*KeyError).Key
	})
	return errs
}

func checkObject(src, prefix string, m map[string]any, fields map[string]*shape, errs *[]error) {
	for k, v := range m {
		key := join(prefix, k)
		f, ok := fields[k]
		if !ok {
			*errs = append(*errs, unknownKey(src, key, k, fields))
			continue
		}
		checkValue(src, key, v, f, errs)
	}
}

func checkValue(src, key string, v any, s *shape, errs *[]error) {
	if v == nil {
		return // null clears the key
	}
	bad := func(want string) {
		*errs = append(*errs, &KeyError{Source: src, Key: key,
			Problem: fmt.Sprintf("want %s, got %s", want, describe(v))})
	}
	switch s.kind {
	case kindString:
		if _, ok := v.(string); !ok {
			bad("a string")
		}
	case kindInt:
		if _, ok := asInt(v); !ok {
			bad("a whole number")
		}
	case kindBool:
		if _, ok := v.(bool); !ok {
			bad("true or false")
		}
	case kindStrings:
		list, ok := v.([]any)
		if !ok {
			bad("a list of strings")
			return
		}
		for i, e := range list {
			if _, ok := e.(string); !ok {
				*errs = append(*errs, &KeyError{Source: src, Key: fmt.Sprintf("%s[%d]", key, i),
					Problem: fmt.Sprintf("want a string, got %s", describe(e))})
			}
		}
	case kindStringMap:
		m, ok := v.(map[string]any)
		if !ok {
			bad("a map of names to values")
			return
		}
		for k, e := range m {
			checkMapKey(src, key, k, errs)
			if !isScalar(e) {
				*errs = append(*errs, &KeyError{Source: src, Key: join(key, k),
					Problem: fmt.Sprintf("want a string, number or boolean, got %s", describe(e))})
			}
		}
	case kindStringMaps:
		m, ok := v.(map[string]any)
		if !ok {
			bad("a map of names to settings")
			return
		}
		for k, e := range m {
			checkMapKey(src, key, k, errs)
			checkValue(src, join(key, k), e, &shape{kind: kindStringMap}, errs)
		}
	case kindStruct:
		m, ok := v.(map[string]any)
		if !ok {
			bad("a map")
			return
		}
		checkObject(src, key, m, s.fields, errs)
	case kindStructSlice:
		list, ok := v.([]any)
		if !ok {
			bad("a list")
			return
		}
		for i, e := range list {
			item := fmt.Sprintf("%s[%d]", key, i)
			m, ok := e.(map[string]any)
			if !ok {
				*errs = append(*errs, &KeyError{Source: src, Key: item,
					Problem: fmt.Sprintf("want a map, got %s", describe(e))})
				continue
			}
			checkObject(src, item, m, s.fields, errs)
		}
	}
}

// checkMapKey refuses names the "." key delimiter would split.
func checkMapKey(src, key, k string, errs *[]error) {
	if k == "" || strings.Contains(k, ".") {
		*errs = append(*errs, &KeyError{Source: src, Key: join(key, k),
			Problem: "names may not be empty or contain \".\""})
	}
}

func unknownKey(src, key, k string, fields map[string]*shape) *KeyError {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	slices.Sort(names)
	e := &KeyError{Source: src, Key: key, Unknown: true}
	if s := suggest.Closest(k, names); s != "" {
		e.Suggestion = strings.TrimSuffix(key, k) + s
	} else {
		e.Valid = names
	}
	return e
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

func isScalar(v any) bool {
	switch v.(type) {
	case string, bool, int, int64, uint64, float64:
		return true
	}
	return false
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case uint64:
		return int(n), true
	case float64:
		if n == float64(int(n)) {
			return int(n), true
		}
	}
	return 0, false
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", x)
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", v)
}
