package grep

import "bytes"

// finder locates occurrences of any of a set of literals in a buffer.
type finder struct {
	lits [][]byte
	fold bool
	// For fold searches: the index in each literal of its rarest byte and
	// that byte's two cases.
	rare   []int
	lo, up []byte
	// next caches, per literal, the next occurrence at or after from (-1:
	// none left), and from the position it was computed for.
	next []int
	from []int
	// loAt and upAt cache the last positions of each literal's rare byte
	// in either case (-1: none left, -2: not searched yet).
	loAt, upAt []int
}

func newFinder(lits [][]byte, fold bool) *finder {
	f := &finder{lits: lits, fold: fold, next: make([]int, len(lits)), from: make([]int, len(lits))}
	f.rare = make([]int, len(lits))
	f.lo = make([]byte, len(lits))
	f.up = make([]byte, len(lits))
	f.loAt = make([]int, len(lits))
	f.upAt = make([]int, len(lits))
	for i, l := range lits {
		f.rare[i] = rarestByte(l, fold)
		c := l[f.rare[i]]
		f.lo[i], f.up[i] = c, c
		if fold {
			f.lo[i], f.up[i] = toLower(c), toUpper(c)
		}
	}
	f.reset()
	return f
}

// reset forgets cached positions, for a new buffer.
func (f *finder) reset() {
	for i := range f.next {
		f.next[i] = -2
		f.from[i] = 0
	}
	for i := range f.loAt {
		f.loAt[i], f.upAt[i] = -2, -2
	}
}

// find returns the smallest offset >= pos at which one of the literals
// starts in buf, or -1.
func (f *finder) find(buf []byte, pos int) int {
	best := -1
	for i := range f.lits {
		n := f.next[i]
		if n == -2 || (n >= 0 && n < pos) || (n == -1 && f.from[i] > pos) {
			n = f.index(i, buf, pos)
			f.next[i], f.from[i] = n, pos
		}
		if n >= 0 && (best < 0 || n < best) {
			best = n
		}
	}
	return best
}

func (f *finder) index(i int, buf []byte, pos int) int {
	lit := f.lits[i]
	r, lo, up := f.rare[i], f.lo[i], f.up[i]
	at := pos + r
	for at < len(buf) {
		j := f.nextEither(i, buf, at, lo, up)
		if j < 0 {
			return -1
		}
		start := j - r
		if start >= pos && start+len(lit) <= len(buf) && f.equal(buf[start:start+len(lit)], lit) {
			return start
		}
		at = j + 1
	}
	return -1
}

// nextEither returns the first offset >= at of byte lo or up in buf,
// remembering where each was last found so no byte is scanned twice.
func (f *finder) nextEither(i int, buf []byte, at int, lo, up byte) int {
	if f.loAt[i] < at && f.loAt[i] != -1 {
		f.loAt[i] = indexFrom(buf, at, lo)
	}
	if lo == up {
		return f.loAt[i]
	}
	if f.upAt[i] < at && f.upAt[i] != -1 {
		f.upAt[i] = indexFrom(buf, at, up)
	}
	switch {
	case f.loAt[i] < 0:
		return f.upAt[i]
	case f.upAt[i] < 0:
		return f.loAt[i]
	}
	return min(f.loAt[i], f.upAt[i])
}

func indexFrom(buf []byte, at int, c byte) int {
	if j := bytes.IndexByte(buf[at:], c); j >= 0 {
		return at + j
	}
	return -1
}

func (f *finder) equal(a, lit []byte) bool {
	if f.fold {
		return asciiEqualFold(a, lit)
	}
	return bytes.Equal(a, lit)
}

func toLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func toUpper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

func asciiEqualFold(a, b []byte) bool {
	for i := range a {
		if a[i] != b[i] && toLower(a[i]) != toLower(b[i]) {
			return false
		}
	}
	return true
}

// commonBytes lists bytes from most to least frequent in source code and
// text; a byte not listed counts as rare.
const commonBytes = " e\tt\nrnaoisld(c)u,p.m;f\"_=g-hb/y:*0{}1w>x[]2v<$&'k#3!+|4\\9q5876%z?j@`~^"

var byteRank = func() [256]int {
	var r [256]int
	for i := range r {
		r[i] = 1000
	}
	for i := 0; i < len(commonBytes); i++ {
		c := commonBytes[i]
		r[c] = i
		if 'a' <= c && c <= 'z' {
			r[c-('a'-'A')] = i + 10
		}
	}
	return r
}()

// rarestByte returns the index of the least frequent byte of lit; with
// fold, a letter counts with both its cases.
func rarestByte(lit []byte, fold bool) int {
	best, bestRank := 0, -1
	for i, c := range lit {
		if fold {
			c = toLower(c)
		}
		if rank := byteRank[c]; rank > bestRank {
			best, bestRank = i, rank
		}
	}
	return best
}
