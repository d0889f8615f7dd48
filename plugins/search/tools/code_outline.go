package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/yagent/yagent/plugins/search/internal/nav"
	"github.com/yagent/yagent/sdk"
)

//go:embed code_outline.md
var codeOutlineDescription string

type codeOutlineInput struct {
	Path   string `json:"path"`
	Symbol string `json:"symbol,omitempty"`
}

// OutlineResult is the structured result of code_outline.
type OutlineResult struct {
	Path    string            `json:"path"`
	Symbols []nav.Symbol      `json:"symbols,omitempty"`
	Callees *nav.CalleeResult `json:"callees,omitempty"`
}

// CodeOutline returns the code_outline tool.
func CodeOutline(cfg Config) sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        "code_outline",
		Description: codeOutlineDescription,
		Brief:       "A source file's definitions.",
		Effect:      sdk.EffectRead,
		ReadOnly:    true,
		Roles:       map[string]sdk.Role{"path": sdk.RolePathRead},
	}, func(ctx context.Context, in codeOutlineInput) (*sdk.Result, error) {
		return runCodeOutline(ctx, cfg, in)
	})
}

func runCodeOutline(ctx context.Context, cfg Config, in codeOutlineInput) (*sdk.Result, error) {
	if strings.TrimSpace(in.Path) == "" {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "path is empty; give the source file to outline")
	}
	abs, err := resolve(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	shown := display(ctx, abs)
	info, err := statPath(abs, shown)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "%s is a folder; code_outline reads one file (use search_files to list the files)", shown)
	}
	f, notes := finder(ctx, cfg)
	symbol := strings.TrimSpace(in.Symbol)

	if symbol != "" && strings.HasSuffix(abs, ".go") {
		res, err := f.Callees(ctx, abs, symbol)
		if err != nil {
			return nil, navError(err, shown)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s\n%s:%d-%d\n", res.Signature, res.Path, res.Line, res.EndLine)
		how := "resolved with the Go type checker"
		if !res.Resolved {
			how = "as written: the package did not type-check"
			notes = append(notes, sdk.Note{Kind: "unresolved", Detail: "callees are the call expressions as written"})
		}
		if res.CheckFailed != "" {
			how = "as written: " + res.CheckFailed
			notes = append(notes, sdk.Note{Kind: "type_check_failed", Detail: res.CheckFailed})
		}
		if len(res.Callees) == 0 {
			fmt.Fprintf(&b, "calls nothing (built-in functions and conversions aside)\n")
		} else {
			fmt.Fprintf(&b, "calls (%s; first line, count):\n", how)
			for _, c := range res.Callees {
				fmt.Fprintf(&b, "  %d  %s", c.Line, c.Name)
				if c.Calls > 1 {
					fmt.Fprintf(&b, " ×%d", c.Calls)
				}
				b.WriteByte('\n')
			}
		}
		b.WriteString("Callers: find_references with the function's name.\n")
		return &sdk.Result{Text: b.String(), Data: OutlineResult{Path: shown, Callees: res}, Notes: notes}, nil
	}

	ss, err := f.Outline(ctx, abs)
	if err != nil {
		return nil, navError(err, shown)
	}
	if symbol != "" {
		var kept []nav.Symbol
		for _, s := range ss {
			if s.Matches(symbol) || s.Scope == symbol || strings.HasPrefix(s.Scope, symbol+".") {
				kept = append(kept, s)
			}
		}
		if len(kept) == 0 {
			return nil, sdk.Errorf(sdk.CodeNotFound, "%s defines nothing named %q; call code_outline without symbol to see its definitions", shown, symbol)
		}
		ss = kept
	}
	var b strings.Builder
	source := "go/parser"
	if len(ss) > 0 {
		source = ss[0].Source
	}
	fmt.Fprintf(&b, "%s: %d definitions (%s)\n", shown, len(ss), source)
	b.WriteString(nav.FormatOutline(ss))
	return &sdk.Result{Text: b.String(), Data: OutlineResult{Path: shown, Symbols: ss}, Notes: notes}, nil
}
