package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/yagent/yagent/plugins/search/internal/grep"
	"github.com/yagent/yagent/sdk"
)

//go:embed grep.md
var grepDescription string

// Limits of grep's parameters.
const (
	grepDefaultResults = 100
	grepMaxResults     = 2000
	grepMaxContext     = 10
)

type grepInput struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path,omitempty"`
	Glob       string `json:"glob,omitempty"`
	IgnoreCase bool   `json:"ignore_case,omitempty"`
	Literal    bool   `json:"literal,omitempty"`
	Context    int    `json:"context,omitempty"`
	MaxResults int    `json:"max_results,omitempty"`
}

// Grep returns the grep tool.
func Grep(cfg Config) sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        "grep",
		Description: grepDescription,
		Brief:       "Search file contents with a regular expression.",
		Effect:      sdk.EffectRead,
		ReadOnly:    true,
		Roles:       map[string]sdk.Role{"path": sdk.RolePathRead},
	}, func(ctx context.Context, in grepInput) (*sdk.Result, error) {
		return runGrep(ctx, cfg, in)
	})
}

func runGrep(ctx context.Context, cfg Config, in grepInput) (*sdk.Result, error) {
	if in.Pattern == "" {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "pattern is empty; give a regular expression or, with literal: true, the text to find")
	}
	root, err := resolve(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	var notes []sdk.Note
	maxResults, n := clamp("max_results", in.MaxResults, grepDefaultResults, 1, grepMaxResults)
	if n != nil {
		notes = append(notes, *n)
	}
	contextLines, n := clamp("context", in.Context, 0, 0, grepMaxContext)
	if n != nil {
		notes = append(notes, *n)
	}
	rg, rgNote := grep.RgPath(cfg.RgPath, cfg.LookPath)
	if rgNote != "" {
		notes = append(notes, sdk.Note{Kind: "rg_path", Detail: rgNote})
	}
	q := grep.Query{
		Root:       root,
		Base:       sdk.CallFrom(ctx).Workspace,
		Show:       sdk.CallFrom(ctx).Temp.Shown,
		Pattern:    in.Pattern,
		Literal:    in.Literal,
		IgnoreCase: in.IgnoreCase,
		Context:    contextLines,
		MaxResults: maxResults,
	}
	if strings.TrimSpace(in.Glob) != "" {
		q.Globs = []string{in.Glob}
	}
	engine := &grep.Engine{RgPath: rg}
	res, err := engine.Search(ctx, q)
	var pe *grep.PatternError
	switch {
	case errors.As(err, &pe):
		return nil, &sdk.ToolError{Code: sdk.CodeInvalidInput, Message: pe.Error()}
	case errors.Is(err, grep.ErrNotFound):
		return nil, sdk.Errorf(sdk.CodeNotFound, "%s does not exist; use search_files or list_dir to find the right path", display(ctx, root))
	case err != nil:
		return nil, toolError(err)
	}
	if rg != "" && res.Backend == grep.BackendGo {
		notes = append(notes, sdk.Note{Kind: "engine", Detail: "ripgrep at " + rg + " could not start; searched with the Go back-end"})
	}
	return grepResult(ctx, in, root, res, notes), nil
}

// grepResult writes the text the model reads: the lines, then what was
// left out and why.
func grepResult(ctx context.Context, in grepInput, root string, res *grep.Result, notes []sdk.Note) *sdk.Result {
	var b strings.Builder
	b.WriteString(res.Text())
	where := display(ctx, root)
	if where == "." || where == "" {
		where = "the workspace"
	}
	if res.Shown == 0 {
		fmt.Fprintf(&b, "No lines match %q in %s", in.Pattern, where)
		if in.Glob != "" {
			fmt.Fprintf(&b, " (files matching %q)", in.Glob)
		}
		b.WriteString(". Ignored (.gitignore), hidden and binary files were skipped")
		if !in.IgnoreCase {
			b.WriteString("; try ignore_case: true or a looser pattern")
		}
		b.WriteString(".\n")
	}
	if res.Truncated {
		detail := fmt.Sprintf("showing %d of %d matching lines in %d files", res.Shown, res.TotalMatches, res.TotalFiles)
		fmt.Fprintf(&b, "[%s, sorted by path; narrow path, glob or pattern, or raise max_results up to %d]\n", detail, grepMaxResults)
		notes = append(notes, sdk.Note{Kind: "truncated", Detail: detail})
	}
	if len(res.Unreadable) > 0 {
		shown := res.Unreadable
		if len(shown) > 5 {
			shown = shown[:5]
		}
		detail := fmt.Sprintf("%d paths could not be read: %s", len(res.Unreadable), strings.Join(shown, ", "))
		fmt.Fprintf(&b, "[%s]\n", detail)
		notes = append(notes, sdk.Note{Kind: "unreadable", Detail: detail})
	}
	return &sdk.Result{Text: b.String(), Data: res, Notes: notes}
}
