package output

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestBuffer_KeepsHeadAndTailAndCountsEverything(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		max       int
		writes    []string
		wantHead  string
		wantTail  string
		wantOmit  int64
		wantTotal int64
	}{
		{name: "under the cap", max: 10, writes: []string{"abc", "de"}, wantHead: "abcde", wantTotal: 5},
		{name: "exactly the cap", max: 4, writes: []string{"abcd"}, wantHead: "ab", wantTail: "cd", wantTotal: 4},
		{name: "one big write", max: 4, writes: []string{"0123456789"}, wantHead: "01", wantTail: "89", wantOmit: 6, wantTotal: 10},
		{name: "many small writes", max: 6, writes: []string{"ab", "cd", "ef", "gh", "ij", "kl", "mn"}, wantHead: "abc", wantTail: "lmn", wantOmit: 8, wantTotal: 14},
		{name: "write larger than the tail after small ones", max: 6, writes: []string{"a", "b", "cdefghijklmnop", "q"}, wantHead: "abc", wantTail: "opq", wantOmit: 11, wantTotal: 17},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := NewBuffer(tt.max)
			for _, w := range tt.writes {
				n, err := b.Write([]byte(w))
				if n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v; want %d, nil (a short write would stop the drain)", w, n, err, len(w))
				}
			}
			c := b.Since(0)
			if got := string(c.Head) + string(c.Tail); got != tt.wantHead+tt.wantTail {
				t.Errorf("Since(0) head+tail = %q, want %q", got, tt.wantHead+tt.wantTail)
			}
			if c.Omitted != tt.wantOmit {
				t.Errorf("Since(0).Omitted = %d, want %d", c.Omitted, tt.wantOmit)
			}
			if b.Total() != tt.wantTotal || c.End != tt.wantTotal {
				t.Errorf("Total() = %d, End = %d, want %d", b.Total(), c.End, tt.wantTotal)
			}
			if got := int64(len(c.Head)+len(c.Tail)) + c.Omitted; got != c.Len() {
				t.Errorf("head+tail+omitted = %d, want the chunk length %d", got, c.Len())
			}
		})
	}
}

func TestBuffer_SinceReadsOnlyNewBytes(t *testing.T) {
	t.Parallel()
	b := NewBuffer(8)
	b.Write([]byte("abcdef"))
	first := b.Since(0)
	if got := first.Text(); got != "abcdef" {
		t.Fatalf("first read = %q, want %q", got, "abcdef")
	}
	b.Write([]byte("ghij"))
	second := b.Since(first.End)
	if got := second.Text(); got != "ghij" {
		t.Errorf("second read = %q, want %q", got, "ghij")
	}
	b.Write([]byte(strings.Repeat("x", 100) + "END!"))
	third := b.Since(second.End)
	if third.Omitted != 100 || string(third.Tail) != "END!" || len(third.Head) != 0 {
		t.Errorf("third read = head %q, omitted %d, tail %q; want no head, 100 left out, tail END!", third.Head, third.Omitted, third.Tail)
	}
	if empty := b.Since(third.End); empty.Len() != 0 || empty.Text() != "" {
		t.Errorf("read at the end = %+v, want empty", empty)
	}
}

func TestChunk_TextSaysHowManyBytesWereLeftOut(t *testing.T) {
	t.Parallel()
	b := NewBuffer(10)
	b.Write([]byte(strings.Repeat("a", 5) + strings.Repeat("b", 1000) + strings.Repeat("c", 5)))
	got := b.Since(0).Text()
	want := "aaaaa\n[... 1000 bytes left out ...]\nccccc"
	if got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
}

func TestChunk_TextNeverCutsACharacter(t *testing.T) {
	t.Parallel()
	// "é" is two bytes; a head of 4 bytes ends inside the second "é", and a
	// tail of 4 bytes starts inside the fourth.
	b := NewBuffer(8)
	b.Write([]byte("aéééééb"))
	got := b.Since(0).Text()
	want := "aé\n[... 6 bytes left out ...]\néb"
	if got != want {
		t.Errorf("Text() = %q, want %q (no cut character, and the count includes the cut bytes)", got, want)
	}
	if !utf8.ValidString(got) {
		t.Errorf("Text() = %q is not valid UTF-8", got)
	}
}

func TestBuffer_ConcurrentWritesAreAllCounted(t *testing.T) {
	t.Parallel()
	b := NewBuffer(64)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				b.Write([]byte("0123456789"))
			}
		})
	}
	wg.Wait()
	if got := b.Total(); got != 80000 {
		t.Errorf("Total() = %d, want 80000", got)
	}
}

func TestBuffer_ChangedFiresOnWrite(t *testing.T) {
	t.Parallel()
	b := NewBuffer(16)
	ch := b.Changed()
	select {
	case <-ch:
		t.Fatal("Changed() fired before any write")
	default:
	}
	b.Write([]byte("x"))
	select {
	case <-ch:
	default:
		t.Fatal("Changed() did not fire after a write")
	}
}

func BenchmarkBuffer_Drain(b *testing.B) {
	buf := NewBuffer(10 << 20)
	chunk := bytes.Repeat([]byte("y\n"), 16<<10)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		buf.Write(chunk)
	}
}

func TestBuffer_LinesCountsEveryLineTheUnfinishedOneToo(t *testing.T) {
	b := NewBuffer(8) // far less than what is written: lines are counted, not kept
	if n := b.Lines(); n != 0 {
		t.Fatalf("empty buffer: %d lines, want 0", n)
	}
	steps := []struct {
		write string
		want  int64
	}{
		{"line 1\nline", 2},
		{" 2\n", 2},
		{"\n", 3},
		{"a\nb\nc", 6},
	}
	for _, s := range steps {
		b.Write([]byte(s.write))
		if n := b.Lines(); n != s.want {
			t.Errorf("after %q: %d lines, want %d", s.write, n, s.want)
		}
	}
}
