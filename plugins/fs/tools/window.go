package tools

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/yagent/yagent/plugins/fs/internal/textenc"
)

// window is a run of whole lines read from a text stream.
type window struct {
	text  []byte
	first int // line number of the first line shown; 0 when none
	shown int // lines shown (a cut long line counts as one)
	// more says lines remain after the window; total is the stream's line
	// count when it was read to its end, else -1.
	more  bool
	total int
	// cutBy says what ended the window before the file's end: "lines" (the
	// line limit), "bytes" (the byte budget; the next line did not fit) or
	// "long_line" (the first line alone exceeds the byte budget and only
	// its head is shown).
	cutBy   string
	longLen int64 // full length of a cut long line
}

const chunkSize = 256 << 10

// lineReaders keeps the 64 KiB line readers of readWindow across calls:
// allocating one per read was most of what reading a small file cost.
var lineReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// readWindow reads lines offset.. (1-based) of r: at most limit lines and
// maxBytes bytes, whichever comes first. Lines split on "\n" only; a "\r"
// stays in its line. Memory is bounded by the window and one chunk, not by
// the stream: skipped lines are counted chunk by chunk, and the part of an
// over-long line beyond the budget is dropped as it streams by. With
// drain, the rest of the stream is read after the window, so total is
// known (and a tee on r sees every byte).
//
// sizeHint, the file's size when known (0 if not), sizes the text buffer
// up front, so a whole small file is read without growing it.
func readWindow(r io.Reader, offset, limit, maxBytes int, drain bool, sizeHint int64) (window, error) {
	w := window{total: -1}
	if sizeHint > 0 {
		w.text = make([]byte, 0, min(sizeHint, int64(maxBytes))+1)
	}
	rest, skipped, err := skipLines(r, offset-1)
	if err != nil {
		return w, err
	}
	if rest == nil { // the stream ended first
		w.total = skipped
		return w, nil
	}
	br := lineReaders.Get().(*bufio.Reader)
	br.Reset(rest)
	defer func() { br.Reset(nil); lineReaders.Put(br) }()
	atEOF := false
	pending := 0 // lines read past the window (one that did not fit)
	for w.shown < limit {
		start := len(w.text)
		room := maxBytes - start
		n, eol, err := readLine(br, &w.text, room)
		if err != nil {
			return w, err
		}
		if n == 0 {
			atEOF = true
			break
		}
		if n > int64(room) {
			if w.shown == 0 {
				w.text = textenc.TrimPartialRune(w.text)
				w.shown, w.cutBy, w.longLen = 1, "long_line", n
			} else {
				w.text = w.text[:start]
				w.cutBy, pending = "bytes", 1
			}
			atEOF = !eol
			break
		}
		w.shown++
		if !eol {
			atEOF = true
			break
		}
	}
	if !atEOF {
		switch {
		case drain:
			pending += countLines(br)
			atEOF = true
		case pending == 0:
			if _, err := br.Peek(1); err != nil {
				atEOF = true
			}
		}
	}
	if atEOF {
		w.total = offset - 1 + w.shown + pending
		w.more = pending > 0
	} else {
		w.more = true
	}
	if w.more && w.cutBy == "" {
		w.cutBy = "lines"
	}
	if w.shown > 0 {
		w.first = offset
	}
	return w, nil
}

// skipLines reads past n lines of r and returns a reader positioned at the
// start of line n+1. When r ends first, rest is nil and skipped is the
// number of lines r had.
func skipLines(r io.Reader, n int) (rest io.Reader, skipped int, err error) {
	if n <= 0 {
		return r, 0, nil
	}
	buf := make([]byte, chunkSize)
	partial := false
	for {
		m, rerr := r.Read(buf)
		chunk := buf[:m]
		if m > 0 {
			partial = chunk[m-1] != '\n'
			need := n - skipped
			if c := bytes.Count(chunk, []byte{'\n'}); c < need {
				skipped += c
			} else {
				pos := 0
				for range need {
					pos += bytes.IndexByte(chunk[pos:], '\n') + 1
				}
				left := append([]byte(nil), chunk[pos:]...)
				return io.MultiReader(bytes.NewReader(left), r), n, nil
			}
		}
		if errors.Is(rerr, io.EOF) {
			if partial {
				skipped++
			}
			return nil, skipped, nil
		}
		if rerr != nil {
			return nil, 0, rerr
		}
	}
}

// readLine reads one line from br, appending at most keep bytes of it to
// dst. n is the line's full length with its "\n"; eol says it had one.
func readLine(br *bufio.Reader, dst *[]byte, keep int) (n int64, eol bool, err error) {
	kept := 0
	for {
		frag, ferr := br.ReadSlice('\n')
		n += int64(len(frag))
		if k := min(keep-kept, len(frag)); k > 0 {
			*dst = append(*dst, frag[:k]...)
			kept += k
		}
		switch {
		case ferr == nil:
			return n, true, nil
		case errors.Is(ferr, bufio.ErrBufferFull):
			continue
		case errors.Is(ferr, io.EOF):
			return n, false, nil
		default:
			return n, false, ferr
		}
	}
}

// countLines reads r to its end and counts its lines, a last line without
// "\n" included.
func countLines(r io.Reader) int {
	buf := make([]byte, chunkSize)
	lines := 0
	partial := false
	for {
		n, err := r.Read(buf)
		if n > 0 {
			lines += bytes.Count(buf[:n], []byte{'\n'})
			partial = buf[n-1] != '\n'
		}
		if err != nil {
			break
		}
	}
	if partial {
		lines++
	}
	return lines
}
