package tools

import (
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/yagent/yagent/plugins/search/internal/ignore"
	"github.com/yagent/yagent/plugins/search/internal/walk"
	"github.com/yagent/yagent/sdk"
)

//go:embed search_files.md
var searchFilesDescription string

// Limits of search_files.
const (
	filesDefaultResults = 200
	filesMaxResults     = 5000
	// filesMaxAlternatives bounds the patterns brace alternation makes of
	// one ({a,b}{c,d} makes 4), and filesMaxGroups its {} groups:
	// doublestar.Match tries each pattern against every name (24 groups of
	// {a,a} took 6 s a name) and recurses into each group with a copy of
	// the pattern (20,000 nested took 2 s a name).
	filesMaxAlternatives = 256
	filesMaxGroups       = 32
)

type searchFilesInput struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path,omitempty"`
	MaxResults int    `json:"max_results,omitempty"`
}

// FilesResult is the structured result of search_files.
type FilesResult struct {
	Paths     []string `json:"paths"`
	Total     int      `json:"total"`
	Truncated bool     `json:"truncated"`
}

// SearchFiles returns the search_files tool.
func SearchFiles(cfg Config) sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        "search_files",
		Description: searchFilesDescription,
		Brief:       "Find files by glob pattern.",
		Effect:      sdk.EffectRead,
		ReadOnly:    true,
		Roles:       map[string]sdk.Role{"path": sdk.RolePathRead},
	}, func(ctx context.Context, in searchFilesInput) (*sdk.Result, error) {
		return runSearchFiles(ctx, in)
	})
}

func runSearchFiles(ctx context.Context, in searchFilesInput) (*sdk.Result, error) {
	pattern := strings.TrimSpace(in.Pattern)
	pattern = strings.TrimPrefix(strings.TrimPrefix(pattern, "./"), "/")
	if pattern == "" {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "pattern is empty; give a glob such as *.go or src/**/*.ts")
	}
	if !doublestar.ValidatePattern(pattern) {
		return nil, sdk.Errorf(sdk.CodeInvalidInput,
			"pattern %q is not a valid glob (an unclosed [ or {, or a trailing backslash); escape a literal [ { or \\ with a backslash", in.Pattern)
	}
	if n, groups := globAlternatives(pattern, filesMaxAlternatives); n > filesMaxAlternatives || groups > filesMaxGroups {
		return nil, sdk.Errorf(sdk.CodeInvalidInput,
			"pattern %q has more {a,b} alternatives than search_files takes (%d {} groups and %d patterns at most); search with fewer, or run search_files once for each",
			in.Pattern, filesMaxGroups, filesMaxAlternatives)
	}
	root, err := resolve(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	shown := display(ctx, root)
	info, err := statPath(root, shown)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "%s is a file; give the folder to search in path, and the name or glob in pattern", shown)
	}
	var notes []sdk.Note
	maxResults, n := clamp("max_results", in.MaxResults, filesDefaultResults, 1, filesMaxResults)
	if n != nil {
		notes = append(notes, *n)
	}

	dirPattern := strings.HasSuffix(pattern, "/")
	pattern = strings.TrimSuffix(pattern, "/")
	anchored := strings.Contains(pattern, "/")
	match := func(rel string) bool {
		subject := rel
		if !anchored {
			subject = rel[strings.LastIndexByte(rel, '/')+1:]
		}
		ok, _ := doublestar.Match(pattern, subject)
		return ok
	}
	opts := walk.Options{Ignore: ignore.NewTree(), Hidden: wantsHidden(pattern), Dirs: true}
	if opts.Hidden {
		opts.Filter = func(rel string, isDir bool) bool { return !(isDir && strings.HasSuffix("/"+rel, "/.git")) }
	}
	var mu sync.Mutex
	var paths []string
	unreadable := 0
	err = walk.Walk(ctx, root, opts, func(e walk.Entry) {
		isDir := e.Type.IsDir()
		if (dirPattern && !isDir) || !match(e.Rel) {
			return
		}
		p := display(ctx, e.Path)
		if isDir {
			p += "/"
		} else if e.Type&fs.ModeSymlink != 0 {
			p += "@"
		}
		mu.Lock()
		paths = append(paths, p)
		mu.Unlock()
	}, func(*walk.Error) {
		mu.Lock()
		unreadable++
		mu.Unlock()
	})
	if err != nil {
		return nil, toolError(err)
	}
	slices.Sort(paths)
	res := &FilesResult{Paths: paths, Total: len(paths)}
	if len(paths) > maxResults {
		res.Paths, res.Truncated = paths[:maxResults], true
	}

	var b strings.Builder
	for _, p := range res.Paths {
		b.WriteString(p)
		b.WriteByte('\n')
	}
	if res.Total == 0 {
		fmt.Fprintf(&b, "No paths match %q under %s (ignored and hidden files skipped).", in.Pattern, whereText(shown))
		if !strings.ContainsAny(pattern, "*?[{") {
			fmt.Fprintf(&b, " The pattern has no wildcard, so it matches the name exactly: try *%s* to match names containing it.", pattern)
		}
		b.WriteByte('\n')
	}
	if res.Truncated {
		detail := fmt.Sprintf("showing %d of %d paths", len(res.Paths), res.Total)
		fmt.Fprintf(&b, "[%s, sorted; narrow the pattern or path, or raise max_results up to %d]\n", detail, filesMaxResults)
		notes = append(notes, sdk.Note{Kind: "truncated", Detail: detail})
	}
	if unreadable > 0 {
		detail := fmt.Sprintf("%d folders could not be read", unreadable)
		fmt.Fprintf(&b, "[%s]\n", detail)
		notes = append(notes, sdk.Note{Kind: "unreadable", Detail: detail})
	}
	if strings.Contains(b.String(), "@\n") {
		b.WriteString("[paths ending in @ are symbolic links, not followed]\n")
	}
	return &sdk.Result{Text: b.String(), Data: res, Notes: notes}, nil
}

// wantsHidden reports whether a pattern names a hidden file or folder in
// one of its segments, such as .github/** or **/.env.
func wantsHidden(pattern string) bool {
	for _, seg := range strings.Split(pattern, "/") {
		if strings.HasPrefix(seg, ".") && seg != "." && seg != ".." {
			return true
		}
	}
	return false
}

func whereText(shown string) string {
	if shown == "." || shown == "" {
		return "the workspace"
	}
	return shown
}

// globAlternatives is how many patterns the {a,b} alternatives of pattern
// (a valid one) make, counted up to limit+1 ({a,b}{c,d} makes 4, {a,{b,c}}
// 3), and how many {} groups it has. It reads the pattern once, skipping
// escapes and [classes] as doublestar does.
func globAlternatives(pattern string, limit int) (alternatives, groups int) {
	capped := func(n int) int { return min(n, limit+1) }
	type group struct{ before, done int }
	var open []group
	cur := 1 // the patterns the current alternative makes so far
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
		case '[':
			for i++; i < len(pattern) && pattern[i] != ']'; i++ {
				if pattern[i] == '\\' {
					i++
				}
			}
		case '{':
			open = append(open, group{before: cur})
			cur = 1
			groups++
		case ',':
			if len(open) > 0 {
				g := &open[len(open)-1]
				g.done, cur = capped(g.done+cur), 1
			}
		case '}':
			if len(open) > 0 {
				g := open[len(open)-1]
				open = open[:len(open)-1]
				cur = capped(g.before * capped(g.done+cur))
			}
		}
	}
	return cur, groups
}
