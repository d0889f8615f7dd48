package udiff

import (
	"fmt"
	"strings"
)

// maxEditDistance bounds the Myers search; beyond it the changed middle is
// shown as one removal and one addition.
const maxEditDistance = 2000

// Unified returns the unified diff from a to b under the name path, with
// context unchanged lines around each change, or "" when a equals b. A "\r"
// ending a line is not shown.
func Unified(path, a, b string, context int) string {
	if a == b {
		return ""
	}
	al, bl := splitLines(a), splitLines(b)
	ops := diffLines(al, bl)
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", path, path)
	for _, h := range hunks(ops, context) {
		writeHunk(&out, h, al, bl)
	}
	return out.String()
}

// line is one line of text without its "\n"; last reports a final line
// with no "\n" after it.
type line struct {
	text string
	last bool
}

func splitLines(s string) []line {
	if s == "" {
		return nil
	}
	parts := strings.SplitAfter(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	out := make([]line, len(parts))
	for i, p := range parts {
		out[i] = line{text: strings.TrimSuffix(p, "\n"), last: !strings.HasSuffix(p, "\n")}
	}
	return out
}

type opKind byte

const (
	opEqual opKind = ' '
	opDel   opKind = '-'
	opIns   opKind = '+'
)

// op is one line of the edit script: an index into a (equal, del) or b (ins).
type op struct {
	kind opKind
	a, b int
}

func diffLines(a, b []line) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []op
	for i := 0; i < pre; i++ {
		ops = append(ops, op{opEqual, i, i})
	}
	ops = append(ops, myers(a[pre:len(a)-suf], b[pre:len(b)-suf], pre, pre)...)
	for i := 0; i < suf; i++ {
		ia, ib := len(a)-suf+i, len(b)-suf+i
		ops = append(ops, op{opEqual, ia, ib})
	}
	return ops
}

// myers is the classic O(ND) shortest edit script; offA and offB shift the
// indexes back into the whole texts.
func myers(a, b []line, offA, offB int) []op {
	n, m := len(a), len(b)
	replace := func() []op {
		ops := make([]op, 0, n+m)
		for i := range n {
			ops = append(ops, op{opDel, offA + i, offB})
		}
		for j := range m {
			ops = append(ops, op{opIns, offA + n, offB + j})
		}
		return ops
	}
	if n == 0 || m == 0 {
		return replace()
	}
	maxD := min(n+m, maxEditDistance)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	found := -1
	for d := 0; d <= maxD && found < 0; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = d
				break
			}
		}
	}
	if found < 0 {
		return replace()
	}
	// Walk the trace back from (n, m).
	var rev []op
	x, y := n, m
	for d := found; d > 0; d-- {
		vp := trace[d]
		k := x - y
		var pk int
		if k == -d || (k != d && vp[off+k-1] < vp[off+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := vp[off+pk]
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
			rev = append(rev, op{opEqual, offA + x, offB + y})
		}
		if x == px {
			y--
			rev = append(rev, op{opIns, offA + x, offB + y})
		} else {
			x--
			rev = append(rev, op{opDel, offA + x, offB + y})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, op{opEqual, offA + x, offB + y})
	}
	ops := make([]op, len(rev))
	for i := range rev {
		ops[i] = rev[len(rev)-1-i]
	}
	return ops
}

type hunk struct{ ops []op }

func hunks(ops []op, context int) []hunk {
	var out []hunk
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].kind == opEqual {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(0, i-context)
		end := i
		for end < len(ops) {
			if ops[end].kind != opEqual {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == opEqual {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = run
		}
		out = append(out, hunk{ops: ops[start:end]})
		i = end
	}
	return out
}

func writeHunk(out *strings.Builder, h hunk, a, b []line) {
	aStart, bStart, aLen, bLen := -1, -1, 0, 0
	for _, o := range h.ops {
		switch o.kind {
		case opEqual:
			aLen++
			bLen++
		case opDel:
			aLen++
		case opIns:
			bLen++
		}
		if aStart < 0 {
			aStart, bStart = o.a, o.b
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", rangeOf(aStart, aLen), rangeOf(bStart, bLen))
	for _, o := range h.ops {
		var l line
		if o.kind == opIns {
			l = b[o.b]
		} else {
			l = a[o.a]
		}
		out.WriteByte(byte(o.kind))
		out.WriteString(strings.TrimSuffix(l.text, "\r"))
		out.WriteByte('\n')
		if l.last {
			out.WriteString("\\ No newline at end of file\n")
		}
	}
}

func rangeOf(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// Matches aligns the lines of b with those of a by the same shortest edit
// script Unified shows: m[j] is the index of the line of a that line j of
// b keeps, or -1 for a line b adds or changes.
func Matches(a, b []string) []int {
	al, bl := make([]line, len(a)), make([]line, len(b))
	for i, s := range a {
		al[i] = line{text: s}
	}
	for j, s := range b {
		bl[j] = line{text: s}
	}
	m := make([]int, len(b))
	for j := range m {
		m[j] = -1
	}
	for _, o := range diffLines(al, bl) {
		if o.kind == opEqual {
			m[o.b] = o.a
		}
	}
	return m
}
