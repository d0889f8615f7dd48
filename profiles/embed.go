package profiles

import (
	"embed"
	"fmt"
	"slices"
	"strings"
)

//go:embed *.yaml schema.json
var files embed.FS

// Default is the profile used when nothing selects another.
const Default = "coder"

// Names returns the names of the built-in profiles, sorted.
func Names() []string {
	entries, err := files.ReadDir(".")
	if err != nil {
		panic(fmt.Sprintf("profiles: embedded files unreadable: %v", err))
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// Read returns the YAML of the built-in profile name.
func Read(name string) ([]byte, error) {
	if !slices.Contains(Names(), name) {
		return nil, fmt.Errorf("profiles: no built-in profile %q", name)
	}
	return files.ReadFile(name + ".yaml")
}

// Schema returns the JSON Schema (draft 2020-12) of a profile file.
func Schema() []byte {
	b, err := files.ReadFile("schema.json")
	if err != nil {
		panic(fmt.Sprintf("profiles: embedded schema unreadable: %v", err))
	}
	return b
}
