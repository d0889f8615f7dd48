package toolspec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/yagent/yagent/sdk"
)

// Tier says how a tool is listed.
type Tier int

// Tiers, from always listed to deferred.
const (
	// Hot tools are always listed and never demoted.
	Hot Tier = iota
	// Warm tools are listed, and demoted first when the schema budget is exceeded.
	Warm
	// Cold tools are deferred: named in a catalog, schema via load_tool.
	Cold
)

func (t Tier) String() string {
	switch t {
	case Hot:
		return "hot"
	case Warm:
		return "warm"
	case Cold:
		return "cold"
	}
	return fmt.Sprintf("tier(%d)", int(t))
}

// ParseTier parses "hot", "warm" or "cold".
func ParseTier(s string) (Tier, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "hot":
		return Hot, nil
	case "warm":
		return Warm, nil
	case "cold":
		return Cold, nil
	}
	return 0, fmt.Errorf("unknown tier %q (want hot, warm or cold)", s)
}

// Families.
const (
	FamilyHost      = "host"
	FamilyFS        = "fs"
	FamilyShell     = "shell"
	FamilySearch    = "search"
	FamilyBrowser   = "browser"
	FamilyCognitive = "cognitive"
)

// Families lists the first-party families, sorted.
func Families() []string {
	return []string{FamilyBrowser, FamilyCognitive, FamilyFS, FamilySearch, FamilyShell}
}

// Host-native tool names.
const (
	LoadTool       = "load_tool"
	AgentExit      = "agent_exit"
	AskUserForHelp = "ask_user_for_help"
)

// Static is the registry's word on one tool.
type Static struct {
	Name      string
	Family    string
	Effect    sdk.Effect
	Roles     map[string]sdk.Role
	Tier      Tier
	Serial    bool
	ReadOnly  bool
	AlwaysAsk bool
	Brief     string
}

// Bind returns spec with everything the registry decides overwritten by s:
// Effect, Roles, Serial, ReadOnly, AlwaysAsk and (when set) Brief.
func (s Static) Bind(spec sdk.Spec) sdk.Spec {
	spec.Name = s.Name
	spec.Effect = s.Effect
	spec.Roles = cloneRoles(s.Roles)
	spec.Serial = s.Serial
	spec.ReadOnly = s.ReadOnly
	spec.AlwaysAsk = s.AlwaysAsk
	if s.Brief != "" {
		spec.Brief = s.Brief
	}
	return spec
}

func cloneRoles(m map[string]sdk.Role) map[string]sdk.Role {
	if m == nil {
		return nil
	}
	out := make(map[string]sdk.Role, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

var registry = mustBuild(staticSpecs)

func mustBuild(specs []Static) map[string]Static {
	m := make(map[string]Static, len(specs))
	for _, s := range specs {
		if s.Name == "" || s.Family == "" || !s.Effect.Valid() {
			panic(fmt.Sprintf("toolspec: incomplete static spec %+v", s))
		}
		for p, r := range s.Roles {
			if !r.Valid() {
				panic(fmt.Sprintf("toolspec: %s: parameter %q has unknown role %q", s.Name, p, r))
			}
		}
		if _, dup := m[s.Name]; dup {
			panic(fmt.Sprintf("toolspec: duplicate static spec %q", s.Name))
		}
		m[s.Name] = s
	}
	return m
}

// Lookup returns the static spec named name.
func Lookup(name string) (Static, bool) {
	s, ok := registry[name]
	if ok {
		s.Roles = cloneRoles(s.Roles)
	}
	return s, ok
}

// Brief returns the registry's one-line brief of name, "" when it has none.
func Brief(name string) string { return registry[name].Brief }

// familyBriefs say in one line what a family's tools are for, where their
// names say the rest: load_tool's catalog names a family's deferred tools
// on one line with it, in place of a line and a brief per tool.
var familyBriefs = map[string]string{
	FamilyBrowser: "a web browser, acting on refs from browser_snapshot",
}

// toolGroups say in one line what a few registry tools of one family are
// for together, where their names tell them apart: the catalog names them
// on one line with it ("todo_{read,write}: the todo list").
var toolGroups = map[string]string{
	"todo_read":       todoGroup,
	"todo_write":      todoGroup,
	"code_outline":    codeGroup,
	"find_references": codeGroup,
	"find_symbol":     codeGroup,
}

const (
	todoGroup = "the todo list"
	codeGroup = "a file's outline, where a name is defined or used"
)

// CatalogGroup returns the one line load_tool's catalog gives the registry
// tool name together with the tools that share it, "" when it gets a line
// and a brief of its own.
func CatalogGroup(name string) string {
	if g, ok := toolGroups[name]; ok {
		return g
	}
	return familyBriefs[registry[name].Family]
}

// All returns every static spec sorted by name.
func All() []Static {
	out := make([]Static, 0, len(registry))
	for _, s := range registry {
		s.Roles = cloneRoles(s.Roles)
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Static) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// OfFamily returns the static specs of family, sorted by name.
func OfFamily(family string) []Static {
	var out []Static
	for _, s := range All() {
		if s.Family == family {
			out = append(out, s)
		}
	}
	return out
}
