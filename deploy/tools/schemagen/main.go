// Command schemagen writes the standalone-strict JSON schemas kubeconform
// validates deploy/k8s against, from the Kubernetes OpenAPI document
// (api/openapi-spec/swagger.json of the k8s.io/kubernetes module, which the
// Go module proxy serves), so CI validates without downloading schemas.
//
// Standalone: every $ref is inlined. Strict: every object that lists its
// properties gets additionalProperties false, so a misspelled field fails.
// Files are named as kubeconform looks them up:
// <kind>[-<group's first label>]-<version>.json, lower case.
//
//	go run ./schemagen -k8s v1.31.0 -out ../schemas StatefulSet.apps/v1 Service.v1 ...
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	k8s := flag.String("k8s", "v1.31.0", "Kubernetes version: the k8s.io/kubernetes module version whose swagger.json is read")
	swagger := flag.String("swagger", "", "swagger.json to read instead of the module's")
	out := flag.String("out", "", "folder the <version>-standalone-strict folder is written in")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: schemagen [-k8s v1.31.0] [-swagger file] -out DIR Kind.group/version ... (e.g. StatefulSet.apps/v1 Service.v1)")
		os.Exit(2)
	}
	if err := run(*k8s, *swagger, *out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}

func run(k8s, swagger, out string, kinds []string) error {
	if swagger == "" {
		dir, err := moduleDir("k8s.io/kubernetes@" + k8s)
		if err != nil {
			return err
		}
		swagger = filepath.Join(dir, "api", "openapi-spec", "swagger.json")
	}
	raw, err := os.ReadFile(swagger)
	if err != nil {
		return fmt.Errorf("read the OpenAPI document: %w", err)
	}
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("parse %s: %w", swagger, err)
	}
	dir := filepath.Join(out, k8s+"-standalone-strict")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, want := range kinds {
		name, def, gvk, err := find(doc.Definitions, want)
		if err != nil {
			return err
		}
		s, err := expand(doc.Definitions, def, []string{name})
		if err != nil {
			return fmt.Errorf("%s: %w", want, err)
		}
		root := s.(map[string]any)
		pin(root, gvk)
		b, err := json.MarshalIndent(root, "", "  ")
		if err != nil {
			return err
		}
		file := filepath.Join(dir, fileName(gvk))
		if err := os.WriteFile(file, append(b, '\n'), 0o644); err != nil {
			return err
		}
		fmt.Println("schemagen: wrote", file)
	}
	return nil
}

// moduleDir downloads a module through the Go module proxy (or finds it in
// the module cache) and returns its folder.
func moduleDir(mod string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", mod)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %w: %s", mod, err, stderr.String())
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("go mod download %s: %w", mod, err)
	}
	if m.Error != "" {
		return "", fmt.Errorf("go mod download %s: %s", mod, m.Error)
	}
	return m.Dir, nil
}

type groupVersionKind struct{ Group, Version, Kind string }

// find returns the definition of want ("Kind.group/version", the core
// group as "Kind.v1") by its x-kubernetes-group-version-kind.
func find(defs map[string]map[string]any, want string) (string, map[string]any, groupVersionKind, error) {
	kind, gv, ok := strings.Cut(want, ".")
	if !ok {
		return "", nil, groupVersionKind{}, fmt.Errorf("kind %q: want Kind.group/version or Kind.v1", want)
	}
	group, version, ok := strings.Cut(gv, "/")
	if !ok {
		group, version = "", gv
	}
	names := make([]string, 0, len(defs))
	for n := range defs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		gvks, _ := defs[n]["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			m, _ := g.(map[string]any)
			if m["kind"] == kind && m["group"] == group && m["version"] == version {
				return n, defs[n], groupVersionKind{group, version, kind}, nil
			}
		}
	}
	return "", nil, groupVersionKind{}, fmt.Errorf("no definition of %s in the OpenAPI document", want)
}

// expand returns a copy of v with each $ref inlined, descriptions dropped
// (they make the files large and kubeconform never shows them),
// int-or-string made a oneOf, and additionalProperties false on every
// object that lists its properties. stack holds the definitions being
// expanded, to refuse a cycle, which a standalone schema cannot hold.
func expand(defs map[string]map[string]any, v any, stack []string) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		if ref, ok := t["$ref"].(string); ok {
			name, ok := strings.CutPrefix(ref, "#/definitions/")
			if !ok {
				return nil, fmt.Errorf("$ref %q is not a local definition", ref)
			}
			for _, s := range stack {
				if s == name {
					return nil, errors.New("recursive definition " + strings.Join(append(stack, name), " → "))
				}
			}
			def, ok := defs[name]
			if !ok {
				return nil, fmt.Errorf("$ref %q names no definition", ref)
			}
			return expand(defs, def, append(stack, name))
		}
		if t["format"] == "int-or-string" {
			return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}, nil
		}
		out := make(map[string]any, len(t))
		for k, e := range t {
			if k == "description" || strings.HasPrefix(k, "x-kubernetes-") {
				continue
			}
			if k == "properties" {
				// Property names are not schema keywords: a property
				// named "description" stays.
				props := map[string]any{}
				for pk, pv := range e.(map[string]any) {
					x, err := expand(defs, pv, stack)
					if err != nil {
						return nil, err
					}
					props[pk] = x
				}
				out[k] = props
				continue
			}
			x, err := expand(defs, e, stack)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		if _, ok := out["properties"]; ok {
			if _, set := out["additionalProperties"]; !set {
				out["additionalProperties"] = false
			}
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			x, err := expand(defs, e, stack)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	}
	return v, nil
}

// pin allows only this kind's apiVersion and kind, as the published
// schemas do: a manifest of another kind never passes by accident.
func pin(root map[string]any, g groupVersionKind) {
	props, _ := root["properties"].(map[string]any)
	apiVersion := g.Version
	if g.Group != "" {
		apiVersion = g.Group + "/" + g.Version
	}
	if p, ok := props["apiVersion"].(map[string]any); ok {
		p["enum"] = []any{apiVersion}
	}
	if p, ok := props["kind"].(map[string]any); ok {
		p["enum"] = []any{g.Kind}
	}
}

// fileName is kubeconform's {{.ResourceKind}}{{.KindSuffix}}.json.
func fileName(g groupVersionKind) string {
	name := strings.ToLower(g.Kind)
	if g.Group != "" {
		name += "-" + strings.ToLower(strings.Split(g.Group, ".")[0])
	}
	return name + "-" + strings.ToLower(g.Version) + ".json"
}
