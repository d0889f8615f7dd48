package grep

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/encoding/unicode"

	"github.com/yagent/yagent/plugins/search/internal/ignore"
	"github.com/yagent/yagent/plugins/search/internal/walk"
)

// mmapMin is the size from which a file is mapped instead of read.
const mmapMin = 8 << 20

// runGo searches with the Go back-end: a parallel walk, each worker
// reading whole files and scanning them.
func (s *search) runGo(ctx context.Context, workers int) error {
	pool := sync.Pool{New: func() any { return s.newScanner() }}
	opts := walk.Options{Workers: workers, Ignore: ignore.NewTree(), Hidden: s.q.Hidden}
	if s.globs != nil {
		opts.Filter = s.globs.keep
	}
	err := walk.Walk(ctx, s.q.Root, opts, func(e walk.Entry) {
		if !e.IsRegular() {
			return
		}
		sc := pool.Get().(*scanner)
		defer pool.Put(sc)
		fh, err := sc.file(e.Path)
		if err != nil {
			s.col.addUnreadable(s.display(e.Path))
			return
		}
		if fh != nil {
			fh.path = s.display(e.Path)
			s.col.add(fh)
		}
	}, func(we *walk.Error) {
		s.col.addUnreadable(s.display(we.Path))
	})
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return ctx.Err()
}

// scanner searches files one at a time; each worker holds its own.
type scanner struct {
	m       *matcher
	context int
	find    *finder
	buf     []byte
}

func (s *search) newScanner() *scanner {
	sc := &scanner{m: s.m, context: s.q.Context}
	if len(s.m.lits) > 0 {
		sc.find = newFinder(s.m.lits, s.m.fold)
	}
	return sc
}

// file searches one file; nil hits for a binary file or no match.
func (sc *scanner) file(path string) (*fileHits, error) {
	data, release, err := sc.load(path)
	if err != nil {
		return nil, err
	}
	defer release()
	data = decodeText(data)
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, nil
	}
	return sc.scan(data), nil
}

// grow returns the scanner's buffer with room for n bytes, as a full-length
// slice.
func (sc *scanner) grow(n int) []byte {
	if cap(sc.buf) < n {
		sc.buf = make([]byte, n+n/4)
	}
	return sc.buf[:cap(sc.buf)]
}

// keep holds on to buf for the next file unless it grew very large.
func (sc *scanner) keep(buf []byte) {
	if cap(buf) <= 16<<20 {
		sc.buf = buf
	} else {
		sc.buf = nil
	}
}

// decodeText drops a UTF-8 byte order mark and decodes UTF-16 that starts
// with one, as ripgrep does.
func decodeText(b []byte) []byte {
	switch {
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		return b[3:]
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}), bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		out, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewDecoder().Bytes(b)
		if err == nil {
			return out
		}
	}
	return b
}

// scan finds the matching lines of data.
func (sc *scanner) scan(data []byte) *fileHits {
	var fh *fileHits
	line, counted := 1, 0 // line number of offset counted
	record := func(ls, le int) {
		line += bytes.Count(data[counted:ls], []byte{'\n'})
		counted = ls
		if fh == nil {
			fh = &fileHits{}
		}
		fh.matches = append(fh.matches, hit{line: line, text: lineText(data[ls:le], sc.m.re)})
		if sc.context > 0 {
			sc.addContext(fh, data, ls, le, line)
		}
	}
	end := len(data) // lines start only before end
	if sc.find != nil {
		sc.find.reset()
		pos := 0
		for pos < end {
			c := sc.find.find(data, pos)
			if c < 0 {
				break
			}
			ls := bytes.LastIndexByte(data[:c], '\n') + 1
			le := lineEnd(data, c)
			if sc.m.exact || sc.m.matchLine(data[ls:le]) {
				record(ls, le)
			}
			pos = le + 1
		}
	} else if !utf8.Valid(data) {
		for ls := 0; ls < end; {
			le := lineEnd(data, ls)
			if sc.m.matchLine(data[ls:le]) {
				record(ls, le)
			}
			ls = le + 1
		}
	} else {
		pos := 0
		for pos < end {
			loc := sc.m.re.FindIndex(data[pos:])
			if loc == nil {
				break
			}
			start := pos + loc[0]
			if start >= end && (end == 0 || data[end-1] == '\n') {
				break // the empty "line" after the final line break
			}
			ls := bytes.LastIndexByte(data[:start], '\n') + 1
			le := lineEnd(data, start)
			record(ls, le)
			pos = le + 1
		}
	}
	if fh != nil && fh.context != nil {
		for _, h := range fh.matches {
			delete(fh.context, h.line)
		}
	}
	return fh
}

func lineEnd(data []byte, at int) int {
	if i := bytes.IndexByte(data[at:], '\n'); i >= 0 {
		return at + i
	}
	return len(data)
}

// addContext records up to sc.context lines around the line [ls, le).
func (sc *scanner) addContext(fh *fileHits, data []byte, ls, le, line int) {
	if fh.context == nil {
		fh.context = map[int]string{}
	}
	start := ls
	for n := 1; n <= sc.context && start > 0; n++ {
		prevEnd := start - 1
		prevStart := bytes.LastIndexByte(data[:prevEnd], '\n') + 1
		fh.context[line-n] = lineText(data[prevStart:prevEnd], nil)
		start = prevStart
	}
	next := le + 1
	for n := 1; n <= sc.context && next < len(data); n++ {
		e := lineEnd(data, next)
		fh.context[line+n] = lineText(data[next:e], nil)
		next = e + 1
	}
}
