package grep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/yagent/yagent/plugins/search/internal/ignore"
	"github.com/yagent/yagent/sdk"
)

// Query is one search.
type Query struct {
	// Root is the absolute path searched: a directory or one file.
	Root string
	// Base is the folder result paths are shown relative to (the
	// workspace); paths outside it are shown absolute, through Show when
	// it is set (a file of the session's temp folder as the session
	// names it).
	Base string
	Show func(abs string) string
	// Pattern is a regular expression (RE2 syntax), or text when Literal.
	Pattern    string
	Literal    bool
	IgnoreCase bool
	// Context is the number of lines shown before and after each match.
	Context int
	// Globs filter files by path relative to Root: a glob without a slash
	// matches a name at any depth; a leading ! excludes. Files must match
	// one plain glob when any is given.
	Globs []string
	// MaxResults caps the matching lines returned; at least 1.
	MaxResults int
	// Hidden includes names starting with a dot.
	Hidden bool
}

// Engine runs searches. Its zero value uses the Go back-end with
// GOMAXPROCS workers.
type Engine struct {
	// RgPath is the ripgrep binary to run; empty uses the Go back-end.
	RgPath string
	// Workers is the Go back-end's parallelism; 0 means GOMAXPROCS.
	Workers int
}

// ErrNotFound is returned when Query.Root does not exist.
var ErrNotFound = errors.New("path not found")

// errRgStart marks a ripgrep that could not be started; the search then
// runs on the Go back-end.
var errRgStart = errors.New("ripgrep could not start")

// Search runs q. A bad pattern or glob is a *PatternError; a missing root
// wraps ErrNotFound.
func (e *Engine) Search(ctx context.Context, q Query) (*Result, error) {
	m, err := compile(q.Pattern, q.Literal, q.IgnoreCase)
	if err != nil {
		return nil, err
	}
	if q.MaxResults < 1 {
		q.MaxResults = 1
	}
	if q.Context < 0 {
		q.Context = 0
	}
	globs, err := compileGlobs(q.Globs)
	if err != nil {
		return nil, err
	}
	q.Root = filepath.Clean(q.Root)
	info, err := os.Stat(q.Root)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", q.Root, ErrNotFound)
		}
		return nil, fmt.Errorf("grep: %w", err)
	}
	s := &search{q: q, m: m, globs: globs, isDir: info.IsDir(), col: newCollector(q.MaxResults, q.Context)}
	if !info.IsDir() && !info.Mode().IsRegular() {
		// A named pipe or device would block a reader: only regular files
		// are searched, as in a walk.
		return s.col.result(BackendGo), nil
	}
	if e.RgPath != "" {
		err := s.runRg(ctx, e.RgPath)
		if err == nil {
			return s.col.result(BackendRg), nil
		}
		if !errors.Is(err, errRgStart) {
			return nil, err
		}
		// The binary went away or cannot run: search without it.
		s.col = newCollector(q.MaxResults, q.Context)
	}
	workers := e.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if err := s.runGo(ctx, workers); err != nil {
		return nil, err
	}
	return s.col.result(BackendGo), nil
}

// search is the state of one running search.
type search struct {
	q     Query
	m     *matcher
	globs *globSet
	isDir bool
	col   *collector
}

// display returns how abs is shown in results.
func (s *search) display(abs string) string {
	if s.q.Base != "" {
		if rel, err := filepath.Rel(s.q.Base, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return filepath.ToSlash(rel)
		}
	}
	if s.q.Show != nil {
		return s.q.Show(abs)
	}
	return abs
}

// globSet is the compiled Globs of a query.
type globSet struct {
	globs     []*ignore.Glob
	negate    []bool
	anchored  []bool
	positives int
}

// compileGlobs compiles globs; a glob containing commas outside braces and
// bracket classes is taken as a list (ignore.SplitTopLevel).
func compileGlobs(raw []string) (*globSet, error) {
	var list []string
	for _, g := range raw {
		for _, part := range ignore.SplitTopLevel(g) {
			if part = strings.TrimSpace(part); part != "" {
				list = append(list, part)
			}
		}
	}
	if len(list) == 0 {
		return nil, nil
	}
	gs := &globSet{}
	for _, g := range list {
		neg := strings.HasPrefix(g, "!")
		body := strings.TrimPrefix(g, "!")
		body = strings.TrimPrefix(body, "./")
		anchored := strings.Contains(strings.TrimSuffix(body, "/"), "/")
		body = strings.TrimPrefix(body, "/")
		c, err := ignore.CompileGlob(body)
		if err != nil {
			return nil, &PatternError{Pattern: g, Problem: "the glob " + err.Error(), Fix: `Close every { or escape it as \{`}
		}
		gs.globs = append(gs.globs, c)
		gs.negate = append(gs.negate, neg)
		gs.anchored = append(gs.anchored, anchored)
		if !neg {
			gs.positives++
		}
	}
	return gs, nil
}

// keep decides an entry below the root by the globs: the last matching glob
// wins; with plain globs present, a file none matches is dropped.
func (g *globSet) keep(rel string, isDir bool) bool {
	if g == nil {
		return true
	}
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	for i := len(g.globs) - 1; i >= 0; i-- {
		subject := base
		if g.anchored[i] {
			subject = rel
		}
		if g.globs[i].Match(subject) {
			return !g.negate[i]
		}
	}
	return isDir || g.positives == 0
}

// rgArgs returns the glob arguments for ripgrep.
func (g *globSet) rgArgs() []string {
	if g == nil {
		return nil
	}
	var args []string
	for i, c := range g.globs {
		p := c.String()
		if g.anchored[i] {
			p = "/" + p
		}
		if g.negate[i] {
			p = "!" + p
		}
		args = append(args, "-g", p)
	}
	return args
}

// RgPath returns the ripgrep binary to use: the profile's setting (the
// search plugin's rg_path) when it names an executable, else rg found by
// lookPath (exec.LookPath when nil); "" when there is none or the setting
// is "off". note says why a setting was not used.
func RgPath(setting string, lookPath func(string) (string, error)) (path, note string) {
	ps := sdk.LookProgram(setting, "rg", lookPath)
	return ps.Path, ps.Note("rg_path")
}
