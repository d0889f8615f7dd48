package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/yagent/yagent/sdk"
)

//go:embed find_references.md
var findReferencesDescription string

// refsShown caps the uses written in the text.
const refsShown = 300

type findReferencesInput struct {
	Name string `json:"name"`
}

// FindReferences returns the find_references tool.
func FindReferences(cfg Config) sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        "find_references",
		Description: findReferencesDescription,
		Brief:       "Where a name is used.",
		Effect:      sdk.EffectRead,
		ReadOnly:    true,
	}, func(ctx context.Context, in findReferencesInput) (*sdk.Result, error) {
		name, root, f, notes, err := nameQuery(ctx, cfg, in.Name, "give the identifier whose uses to find")
		if err != nil {
			return nil, err
		}
		res, err := f.FindReferences(ctx, root, name)
		if err != nil {
			return nil, navError(err, name)
		}
		var b strings.Builder
		shown, total := 0, 0
		for _, g := range res.Groups {
			total += len(g.Refs)
		}
		for _, g := range res.Groups {
			if g.Object != "" {
				fmt.Fprintf(&b, "%s — defined at %s; %s (resolved with the Go type checker)\n", g.Object, orUnknown(g.Defined), plural(len(g.Refs), "use"))
			} else {
				fmt.Fprintf(&b, "word matches (%d; not Go, or in packages that do not compile):\n", len(g.Refs))
			}
			for _, r := range g.Refs {
				if shown == refsShown {
					break
				}
				shown++
				where := ""
				if r.In != "" {
					where = " [in " + r.In + "]"
				}
				fmt.Fprintf(&b, "  %s:%d%s: %s\n", r.Path, r.Line, where, r.Text)
			}
			if len(g.Callers) > 0 {
				parts := make([]string, len(g.Callers))
				for i, c := range g.Callers {
					parts[i] = fmt.Sprintf("%s (%s:%d)", c.Name, c.Path, c.Line)
				}
				fmt.Fprintf(&b, "  callers: %s\n", strings.Join(parts, ", "))
			}
		}
		if total == 0 {
			fmt.Fprintf(&b, "No uses of %q found outside its definitions (names match whole words, case-sensitively).\n", name)
		}
		if shown < total {
			detail := fmt.Sprintf("showing %d of %d uses", shown, total)
			fmt.Fprintf(&b, "[%s; qualify the name as Type.Name, or grep within a folder]\n", detail)
			notes = append(notes, sdk.Note{Kind: "truncated", Detail: detail})
		}
		if res.Truncated {
			notes = append(notes, sdk.Note{Kind: "truncated", Detail: "the word search stopped at its cap; some uses are missing"})
			b.WriteString("[the word search stopped at its cap; some uses are missing]\n")
		}
		if res.Definitions > 0 {
			fmt.Fprintf(&b, "[%d definition lines left out]\n", res.Definitions)
		}
		if len(res.Skipped) > 0 {
			detail := "not type-checked, so that nothing outside the workspace is loaded (uses there are word matches): " + strings.Join(res.Skipped, "; ")
			fmt.Fprintf(&b, "[%s]\n", detail)
			notes = append(notes, sdk.Note{Kind: "skipped", Detail: detail})
		}
		if len(res.Unresolved) > 0 {
			detail := "did not type-check (uses there are word matches): " + strings.Join(res.Unresolved, ", ")
			fmt.Fprintf(&b, "[%s]\n", detail)
			notes = append(notes, sdk.Note{Kind: "unresolved", Detail: detail})
		}
		if res.CheckFailed != "" {
			detail := res.CheckFailed + "; uses in Go files are word matches (call again, or grep for the name)"
			fmt.Fprintf(&b, "[%s]\n", detail)
			notes = append(notes, sdk.Note{Kind: "type_check_failed", Detail: detail})
		}
		return &sdk.Result{Text: b.String(), Data: res, Notes: notes}, nil
	})
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func orUnknown(s string) string {
	if s == "" {
		return "an unknown place"
	}
	return s
}
