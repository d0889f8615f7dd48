package nav

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/yagent/yagent/plugins/search/internal/grep"
	"github.com/yagent/yagent/plugins/search/internal/ignore"
	"github.com/yagent/yagent/plugins/search/internal/walk"
)

// Finder answers navigation questions about the files under a workspace.
type Finder struct {
	// Ctags is the Universal Ctags binary; empty means none.
	Ctags string
	// Grep finds word matches for references; nil means the Go back-end.
	Grep *grep.Engine
	// Base is the folder paths are shown relative to (the workspace).
	Base string
	// Roots are the folders the Go type checker may load source from (the
	// workspace and the call's approved paths); empty means Base alone.
	Roots []string
	// Loader is the binary started as the Go loader (LoaderArg) when the
	// call has a sandbox; empty means this process's own.
	Loader string
	// LoaderEnv is the Go loader's environment; nil means this process's.
	LoaderEnv []string
	// LoadTimeout bounds type-checking; zero means the package's
	// LoadTimeout.
	LoadTimeout time.Duration
}

// Shown returns how abs is displayed: relative to Base when inside it.
func (f *Finder) Shown(abs string) string {
	if f.Base != "" {
		if rel, err := filepath.Rel(f.Base, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return filepath.ToSlash(rel)
		}
	}
	return abs
}

// Outline returns the definitions in the file abs, sorted by line.
func (f *Finder) Outline(ctx context.Context, abs string) ([]Symbol, error) {
	src, err := os.ReadFile(abs)
	if err != nil {
		return nil, err
	}
	shown := f.Shown(abs)
	switch {
	case strings.HasSuffix(abs, ".go"):
		return GoOutline(abs, shown, src)
	case f.Ctags != "":
		tags, err := Ctags(ctx, f.Ctags, []string{abs}, f.Shown)
		if err != nil {
			return nil, err
		}
		if ss, ok := tags[abs]; ok || !strings.HasSuffix(abs, ".py") {
			if !ok && !knownCode(abs) {
				return nil, fmt.Errorf("%s: %w", shown, ErrNoParser)
			}
			return ss, nil
		}
		return PythonOutline(shown, src), nil
	case strings.HasSuffix(abs, ".py"):
		return PythonOutline(shown, src), nil
	}
	return nil, fmt.Errorf("%s: %w (install Universal Ctags for languages other than Go and Python)", shown, ErrNoParser)
}

// codeExts are the extensions counted as source code when no reader
// handles them.
var codeExts = []string{".c", ".cc", ".cpp", ".cs", ".h", ".hpp", ".java", ".js", ".jsx", ".kt", ".lua", ".m",
	".php", ".pl", ".rb", ".rs", ".scala", ".sh", ".swift", ".ts", ".tsx", ".zig"}

func knownCode(path string) bool { return slices.Contains(codeExts, filepath.Ext(path)) }

// SymbolResult is the answer of FindSymbol.
type SymbolResult struct {
	Symbols []Symbol `json:"symbols"`
	Total   int      `json:"total"`
	// Unsupported counts source files that mention the name but that no
	// reader understands (no ctags).
	Unsupported int `json:"unsupported,omitempty"`
}

// FindSymbol returns the definitions of name under root: a plain name, or
// Scope.Name for a method, field or nested definition. At most max are
// returned; Total counts all.
func (f *Finder) FindSymbol(ctx context.Context, root, name string, max int) (*SymbolResult, error) {
	ident := name
	if _, after, ok := cutLastDot(name); ok {
		ident = after
	}
	var mu sync.Mutex
	var found []Symbol
	var ctagsFiles []string
	res := &SymbolResult{}
	needle := []byte(ident)
	err := walk.Walk(ctx, root, walk.Options{Ignore: ignore.NewTree()}, func(e walk.Entry) {
		if !e.IsRegular() {
			return
		}
		src, err := readSource(e.Path)
		if err != nil || !bytes.Contains(src, needle) || bytes.IndexByte(src[:min(len(src), 8000)], 0) >= 0 {
			return
		}
		var ss []Symbol
		switch {
		case strings.HasSuffix(e.Path, ".go"):
			ss, _ = GoOutline(e.Path, f.Shown(e.Path), src)
		case f.Ctags != "":
			mu.Lock()
			ctagsFiles = append(ctagsFiles, e.Path)
			mu.Unlock()
			return
		case strings.HasSuffix(e.Path, ".py"):
			ss = PythonOutline(f.Shown(e.Path), src)
		default:
			if knownCode(e.Path) {
				mu.Lock()
				res.Unsupported++
				mu.Unlock()
			}
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, s := range ss {
			if s.Matches(name) {
				found = append(found, s)
			}
		}
	}, nil)
	if err != nil {
		return nil, err
	}
	slices.Sort(ctagsFiles)
	for len(ctagsFiles) > 0 {
		batch := ctagsFiles[:min(500, len(ctagsFiles))]
		ctagsFiles = ctagsFiles[len(batch):]
		tags, err := Ctags(ctx, f.Ctags, batch, f.Shown)
		if err != nil {
			return nil, err
		}
		for _, ss := range tags {
			for _, s := range ss {
				if s.Matches(name) {
					found = append(found, s)
				}
			}
		}
	}
	sortSymbols(found)
	res.Total = len(found)
	if len(found) > max {
		found = found[:max]
	}
	res.Symbols = found
	return res, nil
}

// maxSourceBytes is the largest file read as source code; bigger files are
// data, not definitions.
const maxSourceBytes = 8 << 20

// readSource reads path unless it is larger than maxSourceBytes.
func readSource(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.Size() > maxSourceBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxSourceBytes)
	}
	return os.ReadFile(path)
}
