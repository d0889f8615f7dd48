package surface

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/sdk"
)

// ToolDef is one tool as it leaves the host.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Brief       string          `json:"brief,omitempty"`
	Family      string          `json:"family"`
	InputSchema json.RawMessage `json:"input_schema"`
	// Tier is the effective tier: after the profile and the budget demotion.
	Tier   toolspec.Tier `json:"-"`
	Effect sdk.Effect    `json:"effect"`
	Serial bool          `json:"serial,omitempty"`
}

// MarshalJSON writes Tier as its word ("hot", "warm", "cold").
func (d ToolDef) MarshalJSON() ([]byte, error) {
	type plain ToolDef
	return json.Marshal(struct {
		plain
		Tier string `json:"tier"`
	}{plain(d), d.Tier.String()})
}

// SortToolDefs sorts defs by name, in place. Every consumer that hands tools
// to a provider calls it: a drifting order silently breaks the provider's
// prefix cache.
func SortToolDefs(defs []ToolDef) {
	slices.SortStableFunc(defs, func(a, b ToolDef) int { return strings.Compare(a.Name, b.Name) })
}

// ComputeToolDefsHash returns the hex of the first 8 bytes of the sha256 of
// the canonical JSON of a sorted copy of defs. It covers what a provider
// sees (name, description, input schema), with the schema's keys in a
// stable order, so equal listings hash equal whatever their order.
func ComputeToolDefsHash(defs []ToolDef) string {
	sorted := slices.Clone(defs)
	SortToolDefs(sorted)
	sum := sha256.Sum256(providerJSON(sorted))
	return hex.EncodeToString(sum[:8])
}

// providerJSON is the canonical JSON of what a provider receives for defs,
// in their order. Its length is also the listing size the budget measures.
func providerJSON(defs []ToolDef) []byte {
	type wire struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		InputSchema any    `json:"input_schema"`
	}
	out := make([]wire, len(defs))
	for i, d := range defs {
		out[i] = wire{Name: d.Name, Description: d.Description, InputSchema: canonical(d.InputSchema)}
	}
	b, err := json.Marshal(out)
	if err != nil {
		// canonical only yields decoded JSON values, which always marshal.
		panic("surface: tool defs do not marshal: " + err.Error())
	}
	return b
}

// canonical decodes raw so that re-encoding sorts its keys; numbers keep
// their text. Raw that does not decode is kept as a string.
func canonical(raw json.RawMessage) any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	return v
}

// ListingSize is the number of bytes a listing of defs takes by the
// budget's measure (schema_budget_bytes is compared with it).
func ListingSize(defs []ToolDef) int { return len(providerJSON(defs)) }

// firstSentence returns the first sentence of a description, for a catalog
// line when nothing better is known.
func firstSentence(desc string) string {
	desc = strings.TrimSpace(desc)
	if i := strings.IndexByte(desc, '\n'); i >= 0 {
		desc = desc[:i]
	}
	if i := strings.Index(desc, ". "); i >= 0 {
		desc = desc[:i+1]
	}
	const maxLen = 120
	if len(desc) > maxLen {
		cut := maxLen
		for cut > 0 && desc[cut]&0xC0 == 0x80 {
			cut--
		}
		desc = strings.TrimSpace(desc[:cut]) + "…"
	}
	return desc
}
