package grep

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// longLine is how long.txt's match is shown: a window around "hello".
var longLine = "long.txt:1:… " + strings.Repeat("x", 99) + " hello " + strings.Repeat("é", 147) +
	" … [long line: bytes 502-901 of 1207 shown]"

// helloAll is every visible "hello" of the fixture: not in ignored, hidden
// or binary files, not through symbolic links.
var helloAll = []string{
	"b.txt:1:hello world",
	"bom.txt:1:hello bom",
	"crlf.txt:1:hello crlf",
	"deep/er/nest.go:3:func hello() {}",
	"docs/guide.txt:1:say hello",
	"important.log:1:hello from log",
	longLine,
	"noeol.txt:2:last hello",
	"sub/keep.md:1:hello keep",
	"sub/rootonly.txt:1:hello sub",
	"u16.txt:1:hello utf16",
}

var searchCases = []struct {
	name      string
	q         Query
	want      []string
	truncated bool
}{
	{name: "literal", q: Query{Pattern: "hello", Literal: true}, want: helloAll},
	{name: "class", q: Query{Pattern: `h[aeiou]llo`}, want: helloAll},
	{name: "octal escape", q: Query{Pattern: `\150ello`}, want: helloAll},
	{name: "hex escape", q: Query{Pattern: `\x{68}ello`}, want: helloAll},
	{name: "ignore case", q: Query{Pattern: "hello", IgnoreCase: true},
		want: append(helloAll[:1:1], append([]string{"b.txt:2:HELLO again"}, helloAll[1:]...)...)},
	{name: "word boundary", q: Query{Pattern: `\bworld\b`}, want: []string{"b.txt:1:hello world"}},
	{name: "ascii word class", q: Query{Pattern: `w\w+d`}, want: []string{"a.go:3:func NewReaderSize() {}", "b.txt:1:hello world"}},
	{name: "literal parens", q: Query{Pattern: "foo(bar)", Literal: true}, want: []string{"b.txt:3:foo(bar)"}},
	{name: "escaped parens", q: Query{Pattern: `foo\(bar\)`}, want: []string{"b.txt:3:foo(bar)"}},
	{name: "quoted", q: Query{Pattern: `\Qfoo.bar\E`}, want: []string{"special.txt:4:foo.bar"}},
	{name: "dot", q: Query{Pattern: `foo.bar`}, want: []string{"b.txt:3:foo(bar)", "special.txt:4:foo.bar", "special.txt:5:fooXbar"}},
	{name: "text anchors are line anchors", q: Query{Pattern: `\Aline \d+\z`}, want: []string{
		"ctx.txt:1:line 1", "ctx.txt:2:line 2", "ctx.txt:4:line 4", "ctx.txt:6:line 6", "ctx.txt:7:line 7", "ctx.txt:8:line 8", "ctx.txt:9:line 9"}},
	{name: "cr stays in the line", q: Query{Pattern: `^end$`}},
	{name: "cr is whitespace", q: Query{Pattern: `\s$`}, want: []string{"b.txt:4:line with trailing space ", "crlf.txt:1:hello crlf", "crlf.txt:2:end"}},
	{name: "unicode literal", q: Query{Pattern: `stra(ß|ss)e`}, want: []string{"unicode.txt:2:straße"}},
	{name: "unicode fold", q: Query{Pattern: `(?i)σίσυφος`}, want: []string{"unicode.txt:3:Σίσυφος"}},
	{name: "empty lines", q: Query{Pattern: `^$`}, want: []string{"a.go:2:", "deep/er/nest.go:2:"}},
	{name: "brace not a count", q: Query{Pattern: `x{,3}`}, want: []string{"special.txt:1:x{,3}"}},
	{name: "open brace", q: Query{Pattern: `a{b`}, want: []string{"special.txt:2:a{b"}},
	{name: "bracket in class", q: Query{Pattern: `[a[b]]`}, want: []string{"special.txt:3:[a[b]]"}},
	{name: "named group", q: Query{Pattern: `(?<g>wor)ld`}, want: []string{"b.txt:1:hello world"}},
	{name: "glob", q: Query{Pattern: "hello", Globs: []string{"*.txt"}}, want: []string{
		"b.txt:1:hello world", "bom.txt:1:hello bom", "crlf.txt:1:hello crlf", "docs/guide.txt:1:say hello",
		longLine, "noeol.txt:2:last hello", "sub/rootonly.txt:1:hello sub", "u16.txt:1:hello utf16"}},
	{name: "negated glob", q: Query{Pattern: "hello", Globs: []string{"!*.txt"}}, want: []string{
		"deep/er/nest.go:3:func hello() {}", "important.log:1:hello from log", "sub/keep.md:1:hello keep"}},
	{name: "anchored glob", q: Query{Pattern: "hello", Globs: []string{"sub/*"}}, want: []string{
		"sub/keep.md:1:hello keep", "sub/rootonly.txt:1:hello sub"}},
	// ripgrep lets a glob override an ignore rule; the search does not.
	{name: "glob does not override ignore files", q: Query{Pattern: "hello", Globs: []string{"*.log"}}, want: []string{
		"important.log:1:hello from log"}},
	{name: "glob list", q: Query{Pattern: "hello", Globs: []string{"*.go,*.md"}}, want: []string{
		"deep/er/nest.go:3:func hello() {}", "sub/keep.md:1:hello keep"}},
	{name: "glob list keeps a class's comma", q: Query{Pattern: "hello", Globs: []string{"*.[g,]o, *.md"}}, want: []string{
		"deep/er/nest.go:3:func hello() {}", "sub/keep.md:1:hello keep"}},
	{name: "hidden", q: Query{Pattern: "hello", Hidden: true}, want: append([]string{".dotfile:1:hello dot", ".hidden/h.txt:1:hello hidden"}, helloAll...)},
	{name: "context", q: Query{Pattern: "needle", Context: 1}, want: []string{
		"ctx.txt-2-line 2", "ctx.txt:3:needle 3", "ctx.txt-4-line 4", "ctx.txt:5:needle 5", "ctx.txt-6-line 6", "--",
		"ctx.txt-9-line 9", "ctx.txt:10:needle 10"}},
	{name: "context capped", q: Query{Pattern: "needle", Context: 2, MaxResults: 2}, truncated: true, want: []string{
		"ctx.txt-1-line 1", "ctx.txt-2-line 2", "ctx.txt:3:needle 3", "ctx.txt-4-line 4", "ctx.txt:5:needle 5",
		"ctx.txt-6-line 6", "ctx.txt-7-line 7"}},
	{name: "capped", q: Query{Pattern: "hello", MaxResults: 3}, truncated: true, want: helloAll[:3]},
	{name: "invalid utf-8 is never matched by a class", q: Query{Pattern: `caf. au|caf[^x] au|caf\S au`}},
	{name: "invalid utf-8 in a line", q: Query{Pattern: `caf`}, want: []string{"latin1.txt:1:caf\uFFFD au lait"}},
	{name: "invalid utf-8 with anchors", q: Query{Pattern: `^caf.*lait$|^ au`}},
	{name: "no match", q: Query{Pattern: "nothing matches this"}},
}

// TestSearchBackendsAgree runs one table against both back-ends: each must
// give the expected lines, and the two results must be identical.
func TestSearchBackendsAgree(t *testing.T) {
	t.Parallel()
	root := fixture(t)
	bs := backends(t)
	for _, tt := range searchCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var results []*Result
			for _, b := range bs {
				q := tt.q
				q.Root, q.Base = root, root
				if q.MaxResults == 0 {
					q.MaxResults = 100
				}
				res, err := b.engine.Search(context.Background(), q)
				if err != nil {
					t.Fatalf("%s: Search(%q): %v", b.name, tt.q.Pattern, err)
				}
				want := ""
				if len(tt.want) > 0 {
					want = strings.Join(tt.want, "\n") + "\n"
				}
				if got := res.Text(); got != want {
					t.Errorf("%s: Search(%q):\n%s\nwant:\n%s", b.name, tt.q.Pattern, got, want)
				}
				if res.Truncated != tt.truncated {
					t.Errorf("%s: Search(%q).Truncated = %v, want %v", b.name, tt.q.Pattern, res.Truncated, tt.truncated)
				}
				if string(res.Backend) != b.name {
					t.Errorf("%s: Backend = %q", b.name, res.Backend)
				}
				res.Backend = ""
				results = append(results, res)
			}
			for _, r := range results[1:] {
				if !reflect.DeepEqual(results[0], r) {
					t.Errorf("Search(%q): back-ends differ:\ngo: %+v\nrg: %+v", tt.q.Pattern, results[0], r)
				}
			}
		})
	}
}

func TestSearchFileRoot(t *testing.T) {
	t.Parallel()
	root := fixture(t)
	for _, b := range backends(t) {
		// An ignored file named explicitly is searched; a binary one is not.
		for file, want := range map[string]string{
			"debug.log":    "debug.log:1:hello ignored\n",
			"bin.dat":      "",
			"late-bin.dat": "",
			"link.go":      "",
		} {
			res, err := b.engine.Search(context.Background(), Query{Root: filepath.Join(root, file), Base: root, Pattern: "hello", MaxResults: 10})
			if err != nil {
				t.Fatalf("%s: Search(%s): %v", b.name, file, err)
			}
			if got := res.Text(); got != want {
				t.Errorf("%s: Search(%s) = %q, want %q", b.name, file, got, want)
			}
		}
		ignoredDir, err := b.engine.Search(context.Background(), Query{Root: filepath.Join(root, "build"), Base: root, Pattern: "hello", MaxResults: 10})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ignoredDir.Text(), "build/out.txt:1:hello build\n"; got != want {
			t.Errorf("%s: Search(build), an ignored folder named explicitly = %q, want %q", b.name, got, want)
		}
		res, err := b.engine.Search(context.Background(), Query{Root: filepath.Join(root, "sub"), Base: root, Pattern: "hello", MaxResults: 10})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := res.Text(), "sub/keep.md:1:hello keep\nsub/rootonly.txt:1:hello sub\n"; got != want {
			t.Errorf("%s: Search(sub) = %q, want %q (the parent's .gitignore applies)", b.name, got, want)
		}
		outside, err := b.engine.Search(context.Background(), Query{Root: filepath.Join(root, "sub"), Base: filepath.Join(root, "docs"), Pattern: "keep", MaxResults: 10})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := outside.Text(), filepath.Join(root, "sub", "keep.md")+":1:hello keep\n"; got != want {
			t.Errorf("%s: a path outside Base = %q, want it absolute: %q", b.name, got, want)
		}
	}
}

func TestSearchRefusesBadPatterns(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	tests := []struct {
		pattern string
		literal bool
		problem string
		fix     string
	}{
		{"foo(", false, "never closed", "literal: true"},
		{"foo)", false, "no matching '('", `\(`},
		{"[abc", false, "never closed", `\[`},
		{"*foo", false, "nothing before it", `\*`},
		{"a**", false, "repeats a repetition", ".*"},
		{"a{1001}", false, "above 1000", "at most 1000"},
		{"[z-a]", false, "backwards", "low to high"},
		{`(\w+) \1`, false, "backreference", "explicitly"},
		{"(?=foo)", false, "lookahead", ""},
		{"(?<=foo)bar", false, "lookbehind", ""},
		{`\p{Nonsense}`, false, "not a known character class", `\p{L}`},
		{`foo\`, false, "lone backslash", `\\`},
		{`\q`, false, "not a known escape", ""},
		{`a\nb`, false, "line break", "one line"},
		{"a\nb", true, "line break", "one line"},
		{`[\W]`, false, `\W inside [...]`, `[^0-9A-Za-z_]`},
		{`[+--]`, false, "-- inside", `\-`},
	}
	for _, b := range backends(t) {
		for _, tt := range tests {
			_, err := b.engine.Search(context.Background(), Query{Root: root, Pattern: tt.pattern, Literal: tt.literal, MaxResults: 1})
			var pe *PatternError
			if !errors.As(err, &pe) {
				t.Errorf("%s: Search(%q) error = %v, want a *PatternError", b.name, tt.pattern, err)
				continue
			}
			if !strings.Contains(pe.Problem, tt.problem) || !strings.Contains(pe.Fix, tt.fix) {
				t.Errorf("%s: Search(%q) = %q; want the problem to say %q and the fix %q", b.name, tt.pattern, err, tt.problem, tt.fix)
			}
		}
	}
}

func TestSearchMissingRoot(t *testing.T) {
	t.Parallel()
	for _, b := range backends(t) {
		_, err := b.engine.Search(context.Background(), Query{Root: filepath.Join(t.TempDir(), "nope"), Pattern: "x", MaxResults: 1})
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: Search(missing) error = %v, want ErrNotFound", b.name, err)
		}
	}
}

// TestSearchUnreadableFile: a file made unreadable is reported, not
// fatal. Tests run as root, where chmod 000 does not stop a read: then the
// file must be searched like any other.
func TestSearchUnreadableFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeTree(t, root, map[string]string{"open.txt": "secret here\n", "locked.txt": "secret there\n"})
	locked := filepath.Join(root, "locked.txt")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(locked, 0o644) })
	f, openErr := os.Open(locked)
	if openErr == nil {
		f.Close()
	}
	for _, b := range backends(t) {
		res, err := b.engine.Search(context.Background(), Query{Root: root, Base: root, Pattern: "secret", MaxResults: 10})
		if err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
		if openErr == nil {
			if got, want := res.Text(), "locked.txt:1:secret there\nopen.txt:1:secret here\n"; got != want || len(res.Unreadable) != 0 {
				t.Errorf("%s (chmod does not bind this user): got %q unreadable %q, want %q", b.name, got, res.Unreadable, want)
			}
			continue
		}
		if got, want := res.Text(), "open.txt:1:secret here\n"; got != want || !reflect.DeepEqual(res.Unreadable, []string{"locked.txt"}) {
			t.Errorf("%s: got %q unreadable %q, want %q and locked.txt reported", b.name, got, res.Unreadable, want)
		}
	}
}

// TestSearchHugeFiles: a 100 MB text file is searched to its last line and
// a 100 MB sparse file (all NUL) is skipped as binary, in bounded time.
func TestSearchHugeFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 MB")
	}
	t.Parallel()
	root := t.TempDir()
	const size = 100 << 20
	line := []byte(strings.Repeat("lorem ipsum dolor sit amet ", 3) + "\n")
	big, err := os.Create(filepath.Join(root, "big.txt"))
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 0, 1<<20)
	for len(chunk)+len(line) <= cap(chunk) {
		chunk = append(chunk, line...)
	}
	written := 0
	for written+len(chunk) <= size {
		if _, err := big.Write(chunk); err != nil {
			t.Fatal(err)
		}
		written += len(chunk)
	}
	lines := written / len(line)
	if _, err := big.WriteString("the needle at the end\n"); err != nil {
		t.Fatal(err)
	}
	big.Close()
	sparse, err := os.Create(filepath.Join(root, "sparse.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sparse.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if _, err := sparse.WriteAt([]byte("\nthe needle in a hole\n"), size); err != nil {
		t.Fatal(err)
	}
	sparse.Close()
	if info, _ := os.Stat(filepath.Join(root, "big.txt")); info.Size() < size-(1<<20) {
		t.Fatalf("fixture is %d bytes, want about 100 MB", info.Size())
	}

	for _, b := range backends(t) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		res, err := b.engine.Search(ctx, Query{Root: root, Base: root, Pattern: `needle at (the|an) end`, MaxResults: 10})
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", b.name, err)
		}
		want := "big.txt:" + strconv.Itoa(lines+1) + ":the needle at the end\n"
		if got := res.Text(); got != want {
			t.Errorf("%s: got %q, want %q (and nothing from the sparse binary file)", b.name, got, want)
		}
	}
}

func TestSearchCancelled(t *testing.T) {
	t.Parallel()
	root := fixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, b := range backends(t) {
		if _, err := b.engine.Search(ctx, Query{Root: root, Pattern: "hello", MaxResults: 10}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Search with a cancelled context = %v, want context.Canceled", b.name, err)
		}
	}
}

// A ripgrep that cannot be started leaves the search to the Go back-end.
func TestSearchRgMissingFallsBack(t *testing.T) {
	t.Parallel()
	root := fixture(t)
	e := &Engine{RgPath: filepath.Join(t.TempDir(), "no-such-rg")}
	res, err := e.Search(context.Background(), Query{Root: root, Base: root, Pattern: "hello", Literal: true, MaxResults: 100})
	if err != nil {
		t.Fatalf("Search with a missing ripgrep: %v", err)
	}
	if got, want := res.Text(), strings.Join(helloAll, "\n")+"\n"; got != want || res.Backend != BackendGo {
		t.Errorf("Search with a missing ripgrep = %q on %s, want %q on go", got, res.Backend, want)
	}
}

func TestRgPath(t *testing.T) {
	t.Parallel()
	look := func(found map[string]string) func(string) (string, error) {
		return func(name string) (string, error) {
			if p, ok := found[name]; ok {
				return p, nil
			}
			return "", errors.New("not found")
		}
	}
	tests := []struct {
		setting  string
		found    map[string]string
		want     string
		wantNote string
	}{
		{"", map[string]string{"rg": "/usr/bin/rg"}, "/usr/bin/rg", ""},
		{"/opt/rg", map[string]string{"rg": "/usr/bin/rg", "/opt/rg": "/opt/rg"}, "/opt/rg", ""},
		{"/opt/missing", map[string]string{"rg": "/usr/bin/rg"}, "/usr/bin/rg", `rg_path "/opt/missing" is not an executable`},
		{"off", map[string]string{"rg": "/usr/bin/rg"}, "", ""},
		{"", nil, "", ""},
	}
	for _, tt := range tests {
		got, note := RgPath(tt.setting, look(tt.found))
		if got != tt.want || !strings.Contains(note, tt.wantNote) || (tt.wantNote == "" && note != "") {
			t.Errorf("RgPath(%q) = %q, %q; want %q, %q", tt.setting, got, note, tt.want, tt.wantNote)
		}
	}
}

// TestSearchBackendsAgreeOnGOROOT compares the back-ends on a real tree:
// parts of $GOROOT/src, with non-ASCII text, testdata, ignore files and
// context lines.
func TestSearchBackendsAgreeOnGOROOT(t *testing.T) {
	if testing.Short() {
		t.Skip("searches GOROOT")
	}
	t.Parallel()
	bs := backends(t)
	if len(bs) < 2 {
		t.Skip("ripgrep hidden or missing: nothing to compare")
	}
	src := filepath.Join(runtime.GOROOT(), "src")
	queries := []Query{
		{Pattern: `(Unmarshal|Decode)[A-Z]\w*\(`, Root: "encoding"},
		{Pattern: "deadline", IgnoreCase: true, Root: "net"},
		{Pattern: `[^\x00-\x7F]`, Root: "unicode"},
		{Pattern: `\w+\s*:=\s*make\(`, Context: 2, Root: "net/http"},
		{Pattern: `^$`, Globs: []string{"*_test.go"}, Root: "strings"},
		{Pattern: `\Btest\B`, Root: "cmd/go/testdata"},
	}
	for _, q := range queries {
		q.Root, q.Base, q.MaxResults = filepath.Join(src, q.Root), src, 3000
		var results []*Result
		for _, b := range bs {
			res, err := b.engine.Search(context.Background(), q)
			if err != nil {
				t.Fatalf("%s: Search(%q): %v", b.name, q.Pattern, err)
			}
			res.Backend = ""
			results = append(results, res)
		}
		if !reflect.DeepEqual(results[0], results[1]) {
			t.Errorf("Search(%q in %s): back-ends differ: go %d matches in %d files, rg %d in %d",
				q.Pattern, q.Root, results[0].TotalMatches, results[0].TotalFiles, results[1].TotalMatches, results[1].TotalFiles)
		}
		if results[0].TotalMatches == 0 {
			t.Errorf("Search(%q in %s) found nothing: the comparison is vacuous", q.Pattern, q.Root)
		}
	}
}

// .gitignore files count inside a git repository only, up to its root; a
// .gitignore above the repository (a home folder's, say) does not hide its
// files. .ignore files count everywhere. Both back-ends agree.
func TestSearchGitignoreNeedsRepository(t *testing.T) {
	t.Parallel()
	outer := t.TempDir()
	writeTree(t, outer, map[string]string{
		".gitignore":       "*\n",
		".ignore":          "*.md\n",
		"repo/.git/HEAD":   "ref: refs/heads/main\n",
		"repo/.gitignore":  "*.log\nq{r\n",
		"repo/a.txt":       "hello repo\n",
		"repo/b.log":       "hello log\n",
		"repo/c.md":        "hello md\n",
		"plain/.gitignore": "*.txt\n",
		"plain/a.txt":      "hello plain\n",
		"plain/sub/b.md":   "hello md\n",
		"plain/sub/c.json": "hello json\n",
	})
	for _, b := range backends(t) {
		for dir, want := range map[string]string{
			"repo":  "repo/a.txt:1:hello repo\n",
			"plain": "plain/a.txt:1:hello plain\nplain/sub/c.json:1:hello json\n",
		} {
			res, err := b.engine.Search(context.Background(), Query{Root: filepath.Join(outer, dir), Base: outer, Pattern: "hello", MaxResults: 10})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Text(); got != want || len(res.Unreadable) > 0 {
				t.Errorf("%s: Search(%s) = %q (unreadable %q), want %q and nothing unreadable", b.name, dir, got, res.Unreadable, want)
			}
		}
	}
}
