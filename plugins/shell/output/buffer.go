package output

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// Buffer retains the first and the last bytes of a stream within a fixed
// budget and counts every byte written to it. Write never fails and never
// returns a short count: a writer that stopped accepting bytes past its cap
// would close the command's pipe and turn "too much output" into SIGPIPE,
// that is, into "the command failed".
//
// A Buffer is safe for concurrent use.
type Buffer struct {
	mu      sync.Mutex
	headCap int
	tailCap int
	head    []byte
	// tail holds the newest bytes; the retained window is its last
	// min(len(tail), tailCap) bytes. It grows to twice tailCap before it is
	// compacted, so compaction costs O(1) per byte.
	tail  []byte
	total int64
	// lines counts the newlines written; last is the last byte, so that a
	// line not yet ended counts too.
	lines   int64
	last    byte
	changed chan struct{}
}

// NewBuffer returns a Buffer that retains at most max bytes: the first half
// and the last half of the stream. max below 2 is raised to 2.
func NewBuffer(max int) *Buffer {
	if max < 2 {
		max = 2
	}
	headCap := max / 2
	return &Buffer{headCap: headCap, tailCap: max - headCap, changed: make(chan struct{})}
}

// Write records p; it always returns len(p), nil.
func (b *Buffer) Write(p []byte) (int, error) {
	n := len(p)
	if n == 0 {
		return 0, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += int64(n)
	b.lines += int64(bytes.Count(p, newline))
	b.last = p[n-1]
	if room := b.headCap - len(b.head); room > 0 {
		take := min(room, len(p))
		b.head = append(b.head, p[:take]...)
		p = p[take:]
	}
	if len(p) > 0 {
		if len(p) >= b.tailCap {
			b.tail = append(b.tail[:0], p[len(p)-b.tailCap:]...)
		} else {
			if len(b.tail)+len(p) > 2*b.tailCap {
				keep := b.tailView()
				b.tail = b.tail[:copy(b.tail, keep)]
			}
			b.tail = append(b.tail, p...)
		}
	}
	close(b.changed)
	b.changed = make(chan struct{})
	return n, nil
}

// tailView returns the retained tail window; b.mu must be held.
func (b *Buffer) tailView() []byte {
	if len(b.tail) > b.tailCap {
		return b.tail[len(b.tail)-b.tailCap:]
	}
	return b.tail
}

// Total returns how many bytes were written, retained or not.
func (b *Buffer) Total() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// Lines returns how many lines were written, the last one counted before
// its newline comes.
func (b *Buffer) Lines() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.total > 0 && b.last != '\n' {
		return b.lines + 1
	}
	return b.lines
}

var newline = []byte{'\n'}

// Changed returns a channel closed at the next Write.
func (b *Buffer) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.changed
}

// Since returns the bytes from stream offset off to the end that the buffer
// still holds, and how many bytes in between it no longer holds.
func (b *Buffer) Since(off int64) Chunk {
	b.mu.Lock()
	defer b.mu.Unlock()
	if off < 0 {
		off = 0
	}
	c := Chunk{Start: off, End: b.total}
	if off >= b.total {
		c.Start = b.total
		return c
	}
	headLen := int64(len(b.head))
	if off < headLen {
		c.Head = append([]byte(nil), b.head[off:]...)
		off = headLen
	}
	tail := b.tailView()
	tailFrom := b.total - int64(len(tail))
	if off < tailFrom {
		c.Omitted = tailFrom - off
		off = tailFrom
	}
	if off < b.total {
		c.Tail = append([]byte(nil), tail[off-tailFrom:]...)
	}
	return c
}

// Chunk is a stretch of a stream as a Buffer holds it: Head, then Omitted
// bytes the buffer no longer holds, then Tail. Start and End are stream
// offsets.
type Chunk struct {
	Start, End int64
	Head       []byte
	Omitted    int64
	Tail       []byte
}

// Len returns how many stream bytes the chunk spans.
func (c Chunk) Len() int64 { return c.End - c.Start }

// Text renders the chunk for a model: sanitized head and tail, and between
// them a marker saying how many bytes were left out. A multi-byte character
// cut at either edge of the gap is counted as left out, so the text holds
// no broken characters and the count stays exact.
func (c Chunk) Text() string {
	if c.Omitted == 0 {
		return Sanitize(append(c.Head, c.Tail...))
	}
	head, tail := c.Head, c.Tail
	omitted := c.Omitted
	if cut := incompleteSuffix(head); cut > 0 {
		head = head[:len(head)-cut]
		omitted += int64(cut)
	}
	if cut := continuationPrefix(tail); cut > 0 {
		tail = tail[cut:]
		omitted += int64(cut)
	}
	var sb strings.Builder
	sb.WriteString(Sanitize(head))
	if sb.Len() > 0 && !strings.HasSuffix(sb.String(), "\n") {
		sb.WriteByte('\n')
	}
	sb.WriteString(OmittedMarker(omitted))
	sb.WriteByte('\n')
	sb.WriteString(Sanitize(tail))
	return sb.String()
}

// OmittedMarker is the line that stands for n bytes of output left out.
func OmittedMarker(n int64) string {
	return fmt.Sprintf("[... %d bytes left out ...]", n)
}

// incompleteSuffix returns the length of a UTF-8 sequence cut short at the
// end of b, 0 when b ends on a character boundary.
func incompleteSuffix(b []byte) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < 0x80 {
			return 0
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}

// continuationPrefix returns how many UTF-8 continuation bytes open b.
func continuationPrefix(b []byte) int {
	n := 0
	for n < len(b) && n < utf8.UTFMax-1 && b[n]&0xC0 == 0x80 {
		n++
	}
	return n
}
