package grep

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Backend names the engine that ran a search.
type Backend string

// The back-ends.
const (
	BackendRg Backend = "rg"
	BackendGo Backend = "go"
)

// Line is one line of a result: a match, or context around one.
type Line struct {
	Path  string `json:"path"`
	Line  int    `json:"line"`
	Text  string `json:"text"`
	Match bool   `json:"match"`
}

// Result is a finished search.
type Result struct {
	// Backend is the engine that ran the search.
	Backend Backend `json:"backend"`
	// Lines holds the kept matches and their context, sorted by path and
	// line.
	Lines []Line `json:"lines"`
	// Shown is the number of matches in Lines.
	Shown int `json:"shown"`
	// TotalMatches and TotalFiles count every matching line and file found.
	TotalMatches int `json:"total_matches"`
	TotalFiles   int `json:"total_files"`
	// Truncated is set when matches beyond MaxResults were dropped.
	Truncated bool `json:"truncated"`
	// Unreadable lists paths that could not be read, sorted.
	Unreadable []string `json:"unreadable,omitempty"`
}

// MaxLineBytes caps the text kept of one line; longer lines are cut at a
// character boundary and marked.
const MaxLineBytes = 400

// lineText turns the raw bytes of a line (without '\n') into the text shown:
// a trailing '\r' dropped, invalid UTF-8 replaced, and a line longer than
// MaxLineBytes cut to a window around the first match of re (nil: its
// start). Both back-ends run this on the same bytes, so they cut alike.
func lineText(b []byte, re *regexp.Regexp) string {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	total := len(b)
	if total <= MaxLineBytes {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	start := 0
	if re != nil {
		if loc := re.FindIndex(b); loc != nil && loc[0] > MaxLineBytes/4 {
			start = loc[0] - MaxLineBytes/4
		}
	}
	end := min(start+MaxLineBytes, total)
	for start > 0 && !utf8.RuneStart(b[start]) {
		start--
	}
	for end < total && !utf8.RuneStart(b[end]) {
		end--
	}
	var s strings.Builder
	if start > 0 {
		s.WriteString("… ")
	}
	s.WriteString(strings.ToValidUTF8(string(b[start:end]), "\uFFFD"))
	fmt.Fprintf(&s, " … [long line: bytes %d-%d of %d shown]", start+1, end, total)
	return s.String()
}

// fileHits is what one file produced.
type fileHits struct {
	path    string
	matches []hit // ascending lines
	context map[int]string
}

type hit struct {
	line int
	text string
}

type ref struct {
	path string
	line int
	text string
}

func refLess(a, b ref) bool {
	if a.path != b.path {
		return a.path < b.path
	}
	return a.line < b.line
}

// collector keeps the MaxResults smallest matches by (path, line) in a
// max-heap, so memory stays bounded whatever the number of matches.
type collector struct {
	max int
	ctx int

	mu           sync.Mutex
	heap         []ref
	files        map[string]*fileHits
	kept         map[string]int
	totalMatches int
	totalFiles   int
	unreadable   map[string]bool
}

func newCollector(max, context int) *collector {
	return &collector{max: max, ctx: context, files: map[string]*fileHits{}, kept: map[string]int{}, unreadable: map[string]bool{}}
}

func (c *collector) addUnreadable(path string) {
	c.mu.Lock()
	c.unreadable[path] = true
	c.mu.Unlock()
}

func (c *collector) add(fh *fileHits) {
	if len(fh.matches) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.totalMatches += len(fh.matches)
	c.totalFiles++
	for _, h := range fh.matches {
		r := ref{path: fh.path, line: h.line, text: h.text}
		if len(c.heap) >= c.max && !refLess(r, c.heap[0]) {
			break // the file's later lines are larger still
		}
		c.push(r)
		c.kept[r.path]++
		if len(c.heap) > c.max {
			top := c.pop()
			if c.kept[top.path]--; c.kept[top.path] == 0 {
				delete(c.kept, top.path)
				delete(c.files, top.path)
			}
		}
	}
	if c.kept[fh.path] > 0 {
		c.files[fh.path] = fh
	}
}

func (c *collector) push(r ref) {
	c.heap = append(c.heap, r)
	i := len(c.heap) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !refLess(c.heap[p], c.heap[i]) {
			break
		}
		c.heap[p], c.heap[i] = c.heap[i], c.heap[p]
		i = p
	}
}

func (c *collector) pop() ref {
	top := c.heap[0]
	last := len(c.heap) - 1
	c.heap[0] = c.heap[last]
	c.heap = c.heap[:last]
	i := 0
	for {
		l, r, big := 2*i+1, 2*i+2, i
		if l < len(c.heap) && refLess(c.heap[big], c.heap[l]) {
			big = l
		}
		if r < len(c.heap) && refLess(c.heap[big], c.heap[r]) {
			big = r
		}
		if big == i {
			return top
		}
		c.heap[i], c.heap[big] = c.heap[big], c.heap[i]
		i = big
	}
}

// result sorts what was kept and adds the context lines of kept matches.
func (c *collector) result(b Backend) *Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	refs := slices.Clone(c.heap)
	slices.SortFunc(refs, func(a, b ref) int {
		if refLess(a, b) {
			return -1
		}
		if refLess(b, a) {
			return 1
		}
		return 0
	})
	res := &Result{Backend: b, Shown: len(refs), TotalMatches: c.totalMatches, TotalFiles: c.totalFiles,
		Truncated: c.totalMatches > len(refs)}
	for p := range c.unreadable {
		res.Unreadable = append(res.Unreadable, p)
	}
	slices.Sort(res.Unreadable)

	isMatch := map[ref]bool{}
	for _, r := range refs {
		isMatch[ref{path: r.path, line: r.line}] = true
	}
	seen := map[ref]bool{}
	emit := func(l Line) {
		k := ref{path: l.Path, line: l.Line}
		if seen[k] {
			return
		}
		seen[k] = true
		res.Lines = append(res.Lines, l)
	}
	for _, r := range refs {
		if c.ctx > 0 {
			fh := c.files[r.path]
			for n := r.line - c.ctx; n < r.line; n++ {
				if t, ok := contextLine(fh, n); ok && !isMatch[ref{path: r.path, line: n}] {
					emit(Line{Path: r.path, Line: n, Text: t})
				}
			}
		}
		emit(Line{Path: r.path, Line: r.line, Text: r.text, Match: true})
		if c.ctx > 0 {
			fh := c.files[r.path]
			for n := r.line + 1; n <= r.line+c.ctx; n++ {
				if isMatch[ref{path: r.path, line: n}] {
					continue
				}
				if t, ok := contextLine(fh, n); ok {
					emit(Line{Path: r.path, Line: n, Text: t})
				}
			}
		}
	}
	// Context after one match may precede the next match's own line only
	// when lines were emitted out of order; keep the list sorted.
	slices.SortStableFunc(res.Lines, func(a, b Line) int {
		if a.Path != b.Path {
			return strings.Compare(a.Path, b.Path)
		}
		return a.Line - b.Line
	})
	return res
}

// contextLine returns line n of a file: a context line, or a match dropped
// by the cap.
func contextLine(fh *fileHits, n int) (string, bool) {
	if fh == nil {
		return "", false
	}
	if t, ok := fh.context[n]; ok {
		return t, true
	}
	i, found := slices.BinarySearchFunc(fh.matches, n, func(h hit, n int) int { return h.line - n })
	if found {
		return fh.matches[i].text, true
	}
	return "", false
}

// Text renders r the way grep -n does: path:line:text for a match,
// path-line-text for context, and -- between groups of context.
func (r *Result) Text() string {
	var b strings.Builder
	hasContext := false
	for _, l := range r.Lines {
		if !l.Match {
			hasContext = true
			break
		}
	}
	for i, l := range r.Lines {
		if hasContext && i > 0 {
			prev := r.Lines[i-1]
			if prev.Path != l.Path || l.Line != prev.Line+1 {
				b.WriteString("--\n")
			}
		}
		sep := "-"
		if l.Match {
			sep = ":"
		}
		fmt.Fprintf(&b, "%s%s%d%s%s\n", l.Path, sep, l.Line, sep, l.Text)
	}
	return b.String()
}
