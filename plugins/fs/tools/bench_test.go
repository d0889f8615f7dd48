package tools

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// benchReadSizeEnv sets the size of BenchmarkReadFile_WindowNearEnd's file,
// in bytes or with a K, M or G suffix (powers of 1024). The default is
// small so `go test -bench` stays quick; the bench script runs 1G.
const benchReadSizeEnv = "YAGENT_BENCH_READ_SIZE"

func benchSize(b *testing.B, def int64) int64 {
	s := strings.TrimSpace(os.Getenv(benchReadSizeEnv))
	if s == "" {
		return def
	}
	mult := int64(1)
	switch strings.ToUpper(s[len(s)-1:]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a size such as 1G", benchReadSizeEnv, os.Getenv(benchReadSizeEnv))
	}
	return n * mult
}

// writeLines writes lines of 100 bytes until size is reached and returns
// how many it wrote.
func writeLines(b *testing.B, path string, size int64) int {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	pad := strings.Repeat("x", 100)
	lines := 0
	for written := int64(0); written < size; lines++ {
		l := fmt.Sprintf("%09d ", lines+1)
		l += pad[:99-len(l)] + "\n"
		n, _ := w.WriteString(l)
		written += int64(n)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return lines
}

// BenchmarkReadFile_WindowNearEnd reads the 2000-line window that ends at
// the last line of a large file: the whole file streams by, only the
// window is kept (see allocs/op).
func BenchmarkReadFile_WindowNearEnd(b *testing.B) {
	size := benchSize(b, 32<<20)
	ws := b.TempDir()
	lines := writeLines(b, filepath.Join(ws, "big.log"), size)
	e := &env{t: b, svc: New(), ws: ws}
	ctx := e.ctx("bench")
	tool := e.tool("read_file")
	input := []byte(fmt.Sprintf(`{"path":"big.log","offset":%d}`, max(lines-maxReadLines+1, 1)))
	b.SetBytes(size)
	b.ResetTimer()
	for b.Loop() {
		res, err := tool.Call(ctx, input)
		if err != nil {
			b.Fatal(err)
		}
		if d := res.Data.(ReadFileData); d.LastLine != lines {
			b.Fatalf("window ends at line %d, want %d", d.LastLine, lines)
		}
	}
}

// BenchmarkEdit_10MB edits one line in the middle of a 10 MB file: load,
// state check, match, re-encode, atomic replace, each iteration.
func BenchmarkEdit_10MB(b *testing.B) {
	ws := b.TempDir()
	lines := writeLines(b, filepath.Join(ws, "big.txt"), 10<<20)
	mid := fmt.Sprintf("%09d ", lines/2)
	e := &env{t: b, svc: New(), ws: ws}
	ctx := e.ctx("bench")
	tool := e.tool("search_replace_in_file")
	inputs := [2][]byte{
		[]byte(fmt.Sprintf(`{"path":"big.txt","old_string":%q,"new_string":%q}`, mid, "EDITED!!! ")),
		[]byte(fmt.Sprintf(`{"path":"big.txt","old_string":%q,"new_string":%q}`, "EDITED!!! ", mid)),
	}
	b.SetBytes(10 << 20)
	i := 0
	for b.Loop() {
		if _, err := tool.Call(ctx, inputs[i%2]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkReadFile_4K reads a 4 KiB file whole, the call an agent makes
// most: resolve, open, sniff, hash, window, remember.
func BenchmarkReadFile_4K(b *testing.B) {
	ws := b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte(strings.Repeat(strings.Repeat("x", 63)+"\n", 64)), 0o644); err != nil {
		b.Fatal(err)
	}
	e := &env{t: b, svc: New(), ws: ws}
	ctx := e.ctx("bench")
	tool := e.tool("read_file")
	input := []byte(`{"path":"f.txt"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Call(ctx, input); err != nil {
			b.Fatal(err)
		}
	}
}
