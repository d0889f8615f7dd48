package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/yagent/yagent/sdk"
)

//go:embed find_symbol.md
var findSymbolDescription string

// findSymbolMax caps the definitions returned.
const findSymbolMax = 200

type findSymbolInput struct {
	Name string `json:"name"`
}

// FindSymbol returns the find_symbol tool.
func FindSymbol(cfg Config) sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        "find_symbol",
		Description: findSymbolDescription,
		Brief:       "Where a name is defined.",
		Effect:      sdk.EffectRead,
		ReadOnly:    true,
	}, func(ctx context.Context, in findSymbolInput) (*sdk.Result, error) {
		name, root, f, notes, err := nameQuery(ctx, cfg, in.Name, "give the identifier to find, such as ParseConfig or Server.Start")
		if err != nil {
			return nil, err
		}
		res, err := f.FindSymbol(ctx, root, name, findSymbolMax)
		if err != nil {
			return nil, navError(err, name)
		}
		var b strings.Builder
		for _, s := range res.Symbols {
			fmt.Fprintf(&b, "%s:%d %s %s", s.Path, s.Line, s.Kind, s.QualifiedName())
			if s.Signature != "" && strings.Contains(s.Signature, s.Name) {
				fmt.Fprintf(&b, " — %s", s.Signature)
			}
			b.WriteByte('\n')
		}
		if res.Total == 0 {
			fmt.Fprintf(&b, "No definition of %q found. Names are matched exactly and case-sensitively; try grep for the text, or find_references.\n", name)
		}
		if res.Total > len(res.Symbols) {
			detail := fmt.Sprintf("showing %d of %d definitions", len(res.Symbols), res.Total)
			fmt.Fprintf(&b, "[%s; qualify the name as Type.Name to narrow]\n", detail)
			notes = append(notes, sdk.Note{Kind: "truncated", Detail: detail})
		}
		if res.Unsupported > 0 {
			detail := fmt.Sprintf("%d source files mention %q in languages read only with Universal Ctags, which is not installed", res.Unsupported, name)
			fmt.Fprintf(&b, "[%s; grep finds them]\n", detail)
			notes = append(notes, sdk.Note{Kind: "unsupported", Detail: detail})
		}
		return &sdk.Result{Text: b.String(), Data: res, Notes: notes}, nil
	})
}
