package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/yagent/yagent/sdk"
)

// setBudget lowers the read budget seams for one serial test.
func setBudget(t *testing.T, lines, bytes int, size int64) {
	t.Helper()
	oldLines, oldBytes, oldSize := maxReadLines, maxReadContentBytes, maxFileSizeForRead
	maxReadLines, maxReadContentBytes, maxFileSizeForRead = lines, bytes, size
	t.Cleanup(func() { maxReadLines, maxReadContentBytes, maxFileSizeForRead = oldLines, oldBytes, oldSize })
}

func numberedLines(n, width int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		line := fmt.Sprintf("line %d ", i)
		b.WriteString(line + strings.Repeat("x", max(width-len(line)-1, 0)) + "\n")
	}
	return b.String()
}

func readData(t *testing.T, res *sdk.Result) ReadFileData {
	t.Helper()
	d, ok := res.Data.(ReadFileData)
	if !ok {
		t.Fatalf("read_file data is %T, want ReadFileData", res.Data)
	}
	return d
}

// body is the file text of a read_file result, without the closing
// continuation line.
func body(res *sdk.Result) string {
	if i := strings.LastIndex(res.Text, "[read_file: "); i >= 0 && len(noteDetails(res, "truncated")) > 0 {
		return res.Text[:i]
	}
	return res.Text
}

// TestReadFile_BudgetLadder is the ladder of
// docs/ARCHITECTURE.md#core-rules §14: every fixture first proves it exceeds
// (or stays under) the limit it is about, since a limit assertion on a
// fixture under the limit is vacuous. It lowers the var seams and so does not
// run in parallel.
func TestReadFile_BudgetLadder(t *testing.T) {
	setBudget(t, 20, 1000, 64<<10)

	t.Run("under every limit the whole file comes back", func(t *testing.T) {
		e := newEnv(t)
		content := numberedLines(10, 30)
		if n := strings.Count(content, "\n"); n >= maxReadLines || len(content) >= maxReadContentBytes {
			t.Fatalf("fixture of %d lines, %d bytes is not under the budget (%d lines, %d bytes)", n, len(content), maxReadLines, maxReadContentBytes)
		}
		e.write("f.txt", content)
		res := e.run("read_file", map[string]any{"path": "f.txt"})
		if res.Text != content {
			t.Errorf("read_file: got %q, want the whole file %q", res.Text, content)
		}
		if d := readData(t, res); d.Truncated != "" || d.NextOffset != 0 || d.TotalLines == nil || *d.TotalLines != 10 {
			t.Errorf("data: got %+v, want no cut and 10 lines in all", d)
		}
	})

	t.Run("the line limit cuts first", func(t *testing.T) {
		e := newEnv(t)
		content := numberedLines(50, 10)
		if n := strings.Count(content, "\n"); n <= maxReadLines || len(content) >= maxReadContentBytes {
			t.Fatalf("fixture of %d lines, %d bytes must exceed %d lines and stay under %d bytes", n, len(content), maxReadLines, maxReadContentBytes)
		}
		e.write("f.txt", content)
		res := e.run("read_file", map[string]any{"path": "f.txt"})
		want := numberedLines(20, 10)
		if got := body(res); got != want {
			t.Errorf("read_file: got %q, want the first %d lines %q", got, maxReadLines, want)
		}
		d := readData(t, res)
		if d.Truncated != "lines" || d.NextOffset != 21 || d.LastLine != 20 {
			t.Errorf("data: got %+v, want truncated=lines, last_line=20, next_offset=21", d)
		}
		mustContain(t, "continuation", res.Text, "offset=21", "lines 1-20 of 50")
	})

	t.Run("the byte budget cuts first, at a line boundary", func(t *testing.T) {
		e := newEnv(t)
		content := numberedLines(15, 101)
		if n := strings.Count(content, "\n"); n >= maxReadLines || len(content) <= maxReadContentBytes {
			t.Fatalf("fixture of %d lines, %d bytes must stay under %d lines and exceed %d bytes", n, len(content), maxReadLines, maxReadContentBytes)
		}
		e.write("f.txt", content)
		res := e.run("read_file", map[string]any{"path": "f.txt"})
		got := body(res)
		if len(got) > maxReadContentBytes {
			t.Errorf("read_file returned %d content bytes, over the budget of %d", len(got), maxReadContentBytes)
		}
		if want := numberedLines(9, 101); got != want {
			t.Errorf("read_file: got %q, want the 9 whole lines that fit %q", got, want)
		}
		if d := readData(t, res); d.Truncated != "bytes" || d.NextOffset != 10 {
			t.Errorf("data: got %+v, want truncated=bytes, next_offset=10", d)
		}
		mustContain(t, "continuation", res.Text, "offset=10", "1000 bytes")
	})

	t.Run("both exceeded: whichever comes first", func(t *testing.T) {
		for _, tc := range []struct {
			width   int
			wantCut string
			shown   int
		}{
			{width: 30, wantCut: "lines", shown: 20}, // 20 lines are 600 bytes
			{width: 200, wantCut: "bytes", shown: 5}, // 5 lines are 1000 bytes
		} {
			e := newEnv(t)
			content := numberedLines(100, tc.width)
			if n := strings.Count(content, "\n"); n <= maxReadLines || len(content) <= maxReadContentBytes {
				t.Fatalf("fixture of %d lines, %d bytes must exceed both %d lines and %d bytes", n, len(content), maxReadLines, maxReadContentBytes)
			}
			e.write("f.txt", content)
			res := e.run("read_file", map[string]any{"path": "f.txt"})
			if d := readData(t, res); d.Truncated != tc.wantCut || d.LastLine != tc.shown {
				t.Errorf("width %d: got %+v, want cut by %s after %d lines", tc.width, d, tc.wantCut, tc.shown)
			}
			if got, want := body(res), numberedLines(tc.shown, tc.width); got != want {
				t.Errorf("width %d: got %q, want %q", tc.width, got, want)
			}
		}
	})

	t.Run("a limit below the budget is honoured, one above is capped", func(t *testing.T) {
		e := newEnv(t)
		content := numberedLines(50, 10)
		if n := strings.Count(content, "\n"); n <= maxReadLines {
			t.Fatalf("fixture of %d lines does not exceed %d", n, maxReadLines)
		}
		e.write("f.txt", content)
		res := e.run("read_file", map[string]any{"path": "f.txt", "limit": 5})
		if got, want := body(res), numberedLines(5, 10); got != want {
			t.Errorf("limit 5: got %q, want %q", got, want)
		}
		mustContain(t, "continuation", res.Text, "offset=6", "you asked for 5 lines")
		res = e.run("read_file", map[string]any{"path": "f.txt", "limit": 1000})
		if d := readData(t, res); d.LastLine != maxReadLines {
			t.Errorf("limit 1000: showed up to line %d, want the cap %d", d.LastLine, maxReadLines)
		}
	})

	t.Run("following next_offset reads the whole file without gap or overlap", func(t *testing.T) {
		for _, width := range []int{10, 130} {
			e := newEnv(t)
			content := numberedLines(67, width)
			if n := strings.Count(content, "\n"); n <= maxReadLines && len(content) <= maxReadContentBytes {
				t.Fatalf("fixture of %d lines, %d bytes exceeds no limit", n, len(content))
			}
			e.write("f.txt", content)
			var all strings.Builder
			offset, calls := 1, 0
			for ; offset != 0 && calls < 100; calls++ {
				res := e.run("read_file", map[string]any{"path": "f.txt", "offset": offset})
				all.WriteString(body(res))
				offset = readData(t, res).NextOffset
			}
			if all.String() != content {
				t.Errorf("width %d: %d calls put together differ from the file:\n got %q\nwant %q", width, calls, all.String(), content)
			}
			if calls < 2 {
				t.Errorf("width %d: %d call(s); the fixture should need several", width, calls)
			}
		}
	})

	t.Run("a window near the end", func(t *testing.T) {
		e := newEnv(t)
		content := numberedLines(500, 10)
		if n := strings.Count(content, "\n"); n <= maxReadLines {
			t.Fatalf("fixture of %d lines does not exceed %d", n, maxReadLines)
		}
		e.write("f.txt", content)
		res := e.run("read_file", map[string]any{"path": "f.txt", "offset": 498})
		if want := "line 498 \nline 499 \nline 500 \n"; res.Text != want {
			t.Errorf("offset 498: got %q, want %q", res.Text, want)
		}
	})

	t.Run("a single line over the byte budget shows its head", func(t *testing.T) {
		e := newEnv(t)
		long := strings.Repeat("é", 3000) // 6000 bytes, cut must not split a rune
		if len(long) <= maxReadContentBytes {
			t.Fatalf("line of %d bytes does not exceed %d", len(long), maxReadContentBytes)
		}
		e.write("f.txt", long+"\nnext\n")
		res := e.run("read_file", map[string]any{"path": "f.txt"})
		got := body(res)
		if !strings.HasPrefix(long, strings.TrimSuffix(got, "\n")) || len(got) > maxReadContentBytes+1 || len(got) < maxReadContentBytes-4 {
			t.Errorf("long line: got %d bytes %q…, want the line's first ~%d bytes", len(got), got[:min(20, len(got))], maxReadContentBytes)
		}
		d := readData(t, res)
		if d.Truncated != "long_line" || d.NextOffset != 2 {
			t.Errorf("data: got %+v, want truncated=long_line, next_offset=2", d)
		}
		mustContain(t, "continuation", res.Text, "6001 bytes long", "offset=2")
		res = e.run("read_file", map[string]any{"path": "f.txt", "offset": 2})
		if res.Text != "next\n" {
			t.Errorf("after the long line: got %q, want %q", res.Text, "next\n")
		}
	})

	t.Run("files over maxFileSizeForRead are refused, at the limit read", func(t *testing.T) {
		e := newEnv(t)
		over := strings.Repeat("a\n", int(maxFileSizeForRead/2)+1)
		if int64(len(over)) <= maxFileSizeForRead {
			t.Fatalf("fixture of %d bytes does not exceed %d", len(over), maxFileSizeForRead)
		}
		e.write("big.txt", over)
		te := e.fail("read_file", map[string]any{"path": "big.txt"}, sdk.CodeInvalidInput)
		mustContain(t, "refusal", te.Message, fmt.Sprint(len(over)), fmt.Sprint(maxFileSizeForRead), "grep")

		at := over[:maxFileSizeForRead]
		if int64(len(at)) != maxFileSizeForRead {
			t.Fatalf("fixture of %d bytes is not at the limit %d", len(at), maxFileSizeForRead)
		}
		e.write("at.txt", at)
		if res := e.run("read_file", map[string]any{"path": "at.txt", "limit": 1}); res.Text == "" {
			t.Errorf("a file at the limit was not read")
		}
	})

	t.Run("offset past the end names the line count", func(t *testing.T) {
		e := newEnv(t)
		e.write("f.txt", "a\nb\nc")
		te := e.fail("read_file", map[string]any{"path": "f.txt", "offset": 5}, sdk.CodeInvalidInput)
		mustContain(t, "error", te.Message, "offset 5", "3 lines")
		if res := e.run("read_file", map[string]any{"path": "f.txt", "offset": 3}); res.Text != "c" {
			t.Errorf("last line without newline: got %q, want %q", res.Text, "c")
		}
	})
}

// TestReadFile_DefaultBudget pins the seams' defaults to
// docs/ARCHITECTURE.md#core-rules §14.
func TestReadFile_DefaultBudget(t *testing.T) {
	t.Parallel()
	if maxReadLines != 2000 || maxReadContentBytes != 256<<10 || maxFileSizeForRead != 4<<30 {
		t.Errorf("budget: got %d lines, %d bytes, %d max size; want 2000, 262144, 4294967296",
			maxReadLines, maxReadContentBytes, maxFileSizeForRead)
	}
}

func TestReadFile_RefusesNonRegularAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := os.Mkdir(filepath.Join(e.ws, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(e.ws, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"dir", "is a directory: use list_dir"},
		{"fifo", "named pipe"},
		{"/dev/null", ""},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := e.call(e.ctx("s1", "/dev/null"), "read_file", map[string]any{"path": tc.path})
			done <- err
		}()
		select {
		case err := <-done:
			te, ok := sdk.AsToolError(err)
			if !ok || te.Code != sdk.CodeInvalidInput || !strings.Contains(te.Message, tc.want) {
				t.Errorf("read_file(%s): got %v, want invalid_input mentioning %q", tc.path, err, tc.want)
			}
		case <-time.After(10 * time.Second): // back-stop only: a refusal is immediate
			t.Fatalf("read_file(%s) hangs", tc.path)
		}
	}
}

func TestReadFile_BinaryIsDescribed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 100)...)
	if err := os.WriteFile(filepath.Join(e.ws, "img.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	res := e.run("read_file", map[string]any{"path": "img.png"})
	mustContain(t, "result", res.Text, "binary file", "image/png", fmt.Sprint(len(png)))
	if strings.Contains(res.Text, "IHDR") {
		t.Errorf("binary content was dumped: %q", res.Text)
	}
}

func TestReadFile_Encodings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, want, encoding string
	}{
		{"utf-8 bom", "\xEF\xBB\xBFhello\r\nworld\r\n", "hello\r\nworld\r\n", "utf-8 with BOM"},
		{"utf-16le", "\xFF\xFEh\x00i\x00\n\x00", "hi\n", "utf-16le with BOM"},
		{"utf-16be", "\xFE\xFF\x00h\x00i\x00\n", "hi\n", "utf-16be with BOM"},
		{"gb18030", "\xc4\xe3\xba\xc3\n", "你好\n", "gb18030"},
		// Past the first 8 KiB, which are ASCII: read as the edit tools,
		// which see the whole file, decode it.
		{"gb18030 after an ascii head", strings.Repeat("ascii line\n", 1000) + "\xc4\xe3\xba\xc3\n", strings.Repeat("ascii line\n", 1000) + "你好\n", "gb18030"},
		{"utf-8 after an ascii head", strings.Repeat("ascii line\n", 1000) + "héllo\n", strings.Repeat("ascii line\n", 1000) + "héllo\n", ""},
		{"plain", "plain\n", "plain\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.write("f.txt", tt.file)
			res := e.run("read_file", map[string]any{"path": "f.txt"})
			if res.Text != tt.want {
				t.Errorf("read_file: got %q, want %q", res.Text, tt.want)
			}
			if d := readData(t, res); d.Encoding != tt.encoding {
				t.Errorf("encoding: got %q, want %q", d.Encoding, tt.encoding)
			}
		})
	}
}

func TestReadFile_NotFoundAndEmpty(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fail("read_file", map[string]any{"path": "nope.txt"}, sdk.CodeNotFound)
	e.write("empty.txt", "")
	res := e.run("read_file", map[string]any{"path": "empty.txt"})
	mustContain(t, "result", res.Text, "empty")
}

// TestReadFile_EditsWhatItShowed: a GB18030 file whose head is ASCII reads
// as the edit tools see it, and the text read is the text an edit finds.
func TestReadFile_EditsWhatItShowed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	head := strings.Repeat("ascii line\n", 1000)
	e.write("gb.txt", head+"\xc4\xe3\xba\xc3\n")
	res := e.run("read_file", map[string]any{"path": "gb.txt"})
	if !strings.Contains(res.Text, "你好") || strings.Contains(res.Text, "\uFFFD") {
		t.Fatalf("read_file shows %q at the end", res.Text[len(res.Text)-20:])
	}
	e.run("search_replace_in_file", map[string]any{"path": "gb.txt", "old_string": "你好", "new_string": "再见"})
	if got := e.read("gb.txt"); got != head+"\xd4\xd9\xbc\xfb\n" {
		t.Errorf("after the edit the file ends %q, want GB18030 再见", got[len(got)-8:])
	}
}

func TestUTF8Check_RunesCutBetweenWrites(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		parts []string
		valid bool
	}{
		{"whole", []string{"héllo"}, true},
		{"a rune cut in two", []string{"h\xc3", "\xa9llo"}, true},
		{"a rune cut in three", []string{"\xe4", "\xbd", "\xa0"}, true},
		{"a bad byte", []string{"ok", "\xff"}, false},
		{"a rune never finished", []string{"ok\xe4\xbd"}, false},
		{"GB18030", []string{"\xc4\xe3\xba\xc3"}, false},
	} {
		var c utf8Check
		for _, p := range tc.parts {
			_, _ = c.Write([]byte(p))
		}
		if c.valid() != tc.valid {
			t.Errorf("%s: valid = %v, want %v", tc.name, c.valid(), tc.valid)
		}
	}
}

// TestReadFile_SizeSaysNothing: a file whose size is 0 though it has text
// (as /proc gives its files) is read until it ends, not shown empty.
func TestReadFile_SizeSaysNothing(t *testing.T) {
	t.Parallel()
	const proc = "/proc/version"
	if fi, err := os.Stat(proc); err != nil || fi.Size() != 0 {
		t.Skipf("%s: no file whose size is 0 though it has text here (%v)", proc, err)
	}
	want, err := os.ReadFile(proc)
	if err != nil || len(want) == 0 {
		t.Skipf("%s: %q, %v", proc, want, err)
	}
	e := newEnv(t)
	res, err := e.call(e.ctx("s1", proc), "read_file", map[string]any{"path": proc})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != string(want) {
		t.Errorf("read_file %s: got %q, want %q", proc, res.Text, want)
	}
}
