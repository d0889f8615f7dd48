package grep

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/yagent/yagent/sdk/sandbox"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/yagent/yagent/plugins/search/internal/ignore"
)

// rgStderrMax caps what is kept of ripgrep's stderr.
const rgStderrMax = 64 << 10

// runRg searches with ripgrep: --json output parsed as it streams, ripgrep
// running with all its threads.
func (s *search) runRg(ctx context.Context, bin string) error {
	dir, arg := s.q.Root, "."
	if !s.isDir {
		dir, arg = filepath.Dir(s.q.Root), filepath.Base(s.q.Root)
	}
	args := []string{"--json", "--no-config", "--no-mmap", "--no-ignore-global"}
	if s.m.rgFixed {
		args = append(args, "--fixed-strings")
		if s.q.IgnoreCase {
			args = append(args, "--ignore-case")
		}
	} else {
		args = append(args, "--case-sensitive")
	}
	if s.q.Hidden {
		args = append(args, "--hidden")
	}
	if s.q.Context > 0 {
		args = append(args, "--context", strconv.Itoa(s.q.Context))
	}
	if s.isDir {
		args = append(args, s.globs.rgArgs()...)
	}
	args = append(args, "--regexp", s.m.rgExpr, "--", arg)

	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	stderr := &cappedBuffer{max: rgStderrMax}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("ripgrep: %w", err)
	}
	// ripgrep runs inside the call's sandbox: it reads what a command of
	// the call could, never the home's private files.
	if err := sandbox.StartForCall(ctx, cmd); err != nil {
		return fmt.Errorf("%w: %s: %w", errRgStart, bin, err)
	}
	p := &rgParser{s: s, dir: dir, filter: newPathFilter(s, dir)}
	perr := p.read(stdout)
	if perr != nil {
		_, _ = io.Copy(io.Discard, stdout)
	}
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if perr != nil {
		return fmt.Errorf("ripgrep output: %w", perr)
	}
	var exit *exec.ExitError
	if werr != nil && !errors.As(werr, &exit) {
		return fmt.Errorf("ripgrep: %w", werr)
	}
	s.rgErrors(dir, stderr.String())
	if exit != nil && exit.ExitCode() == 2 && p.messages == 0 && stderr.Len() > 0 && !s.hasFileErrors(stderr.String()) {
		return &PatternError{Pattern: s.q.Pattern, Problem: "ripgrep refused it: " + strings.TrimSpace(stderr.String()), Fix: literalFix}
	}
	return nil
}

// hasFileErrors reports whether stderr holds errors about paths, as opposed
// to an error about the pattern or the arguments.
func (s *search) hasFileErrors(stderr string) bool {
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if _, _, ok := rgErrorPath(l); ok {
			return true
		}
	}
	return false
}

// rgErrors records the paths ripgrep could not read.
func (s *search) rgErrors(dir, stderr string) {
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if p, _, ok := rgErrorPath(l); ok {
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			s.col.addUnreadable(s.display(p))
		}
	}
}

// rgErrorPath splits a ripgrep error line "path: message (os error N)"
// (paths relative to the directory ripgrep ran in start with ./). Other
// lines, such as warnings about a bad glob in an ignore file, are not
// about unreadable paths.
func rgErrorPath(line string) (path, msg string, ok bool) {
	line = strings.TrimPrefix(line, "rg: ")
	if !strings.HasPrefix(line, "./") && !strings.HasPrefix(line, "/") || !osErrorSuffix.MatchString(line) {
		return "", "", false
	}
	i := strings.LastIndex(line, ": ")
	if i < 0 {
		return "", "", false
	}
	return line[:i], line[i+2:], true
}

var osErrorSuffix = regexp.MustCompile(`\(os error \d+\)$`)

// pathFilter re-checks ripgrep's matches against package ignore's rules, so
// that both back-ends keep exactly the same files (ripgrep lets a glob
// override an ignore rule; this search does not).
type pathFilter struct {
	s    *search
	root string
	tree *ignore.Tree
	dirs map[string]bool
}

func newPathFilter(s *search, dir string) *pathFilter {
	return &pathFilter{s: s, root: dir, tree: ignore.NewTree(), dirs: map[string]bool{}}
}

// keep reports whether rel (slash-separated, relative to the root) is kept
// by the walk's rules: every directory on the way and the file itself.
func (f *pathFilter) keep(rel string) bool {
	if !f.s.isDir {
		return true
	}
	parts := strings.Split(rel, "/")
	parent := f.root
	for i, name := range parts {
		isDir := i < len(parts)-1
		sub := strings.Join(parts[:i+1], "/")
		abs := parent + string(filepath.Separator) + name
		if isDir {
			if ok, seen := f.dirs[sub]; seen {
				if !ok {
					return false
				}
				parent = abs
				continue
			}
		}
		ok := !f.tree.Lookup(parent).Excluded(abs, isDir, f.s.q.Hidden) && f.s.globs.keep(sub, isDir)
		if isDir {
			f.dirs[sub] = ok
		}
		if !ok {
			return false
		}
		parent = abs
	}
	return true
}

// rgParser turns ripgrep's --json stream into file results.
type rgParser struct {
	s        *search
	dir      string
	filter   *pathFilter
	messages int

	cur     *fileHits
	curPath string
	curKeep bool
}

func (p *rgParser) read(r io.Reader) error {
	br := bufio.NewReaderSize(r, 256<<10)
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 {
			if perr := p.message(line); perr != nil {
				return perr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// rgMessage is the part of a ripgrep JSON message this parser reads.
type rgMessage struct {
	Type string `json:"type"`
	Data struct {
		Path         rgData          `json:"path"`
		Lines        rgData          `json:"lines"`
		LineNumber   int             `json:"line_number"`
		BinaryOffset json.RawMessage `json:"binary_offset"`
	} `json:"data"`
}

type rgData struct {
	Text  *string `json:"text"`
	Bytes *string `json:"bytes"`
}

func (d rgData) value() []byte {
	if d.Text != nil {
		return []byte(*d.Text)
	}
	if d.Bytes != nil {
		b, _ := base64.StdEncoding.DecodeString(*d.Bytes)
		return b
	}
	return nil
}

func (p *rgParser) message(line []byte) error {
	typ, path, text, num, binary, ok := fastParse(line)
	if !ok {
		var m rgMessage
		if err := json.Unmarshal(line, &m); err != nil {
			return fmt.Errorf("line %q: %w", truncate(line, 200), err)
		}
		typ, path, text, num = m.Type, m.Data.Path.value(), m.Data.Lines.value(), m.Data.LineNumber
		binary = len(m.Data.BinaryOffset) > 0 && string(m.Data.BinaryOffset) != "null"
	}
	p.messages++
	switch typ {
	case "begin":
		p.curPath = strings.TrimPrefix(string(path), "./")
		p.curKeep = p.filter.keep(p.curPath)
		p.cur = &fileHits{path: p.s.display(filepath.Join(p.dir, filepath.FromSlash(p.curPath)))}
	case "match", "context":
		if p.cur == nil || !p.curKeep {
			return nil
		}
		text = bytes.TrimSuffix(text, []byte{'\n'})
		if typ == "match" {
			p.cur.matches = append(p.cur.matches, hit{line: num, text: lineText(text, p.s.m.re)})
		} else {
			if p.cur.context == nil {
				p.cur.context = map[int]string{}
			}
			p.cur.context[num] = lineText(text, nil)
		}
	case "end":
		if p.cur != nil && p.curKeep && !binary {
			p.s.col.add(p.cur)
		}
		p.cur = nil
	}
	return nil
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// fastParse reads the fields of a ripgrep message laid out the way ripgrep
// writes them, without reflection; ok is false for anything else, which
// the caller then decodes with encoding/json.
func fastParse(line []byte) (typ string, path, text []byte, num int, binary, ok bool) {
	rest, found := bytes.CutPrefix(line, []byte(`{"type":"`))
	if !found {
		return
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return
	}
	typ = string(rest[:end])
	rest = rest[end+1:]
	if typ == "summary" {
		return typ, nil, nil, 0, false, true
	}
	if rest, found = bytes.CutPrefix(rest, []byte(`,"data":{"path":`)); !found {
		return
	}
	if path, rest, found = fastData(rest); !found {
		return
	}
	switch typ {
	case "begin":
		return typ, path, nil, 0, false, true
	case "end":
		if rest, found = bytes.CutPrefix(rest, []byte(`,"binary_offset":`)); !found {
			return
		}
		return typ, path, nil, 0, !bytes.HasPrefix(rest, []byte("null")), true
	case "match", "context":
		if rest, found = bytes.CutPrefix(rest, []byte(`,"lines":`)); !found {
			return
		}
		if text, rest, found = fastData(rest); !found {
			return
		}
		if rest, found = bytes.CutPrefix(rest, []byte(`,"line_number":`)); !found {
			return
		}
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			num = num*10 + int(rest[i]-'0')
			i++
		}
		if i == 0 {
			return
		}
		return typ, path, text, num, false, true
	}
	return
}

// fastData reads {"text":"..."} or {"bytes":"..."} at the start of b.
func fastData(b []byte) (val, rest []byte, ok bool) {
	isBytes := false
	switch {
	case bytes.HasPrefix(b, []byte(`{"text":"`)):
		b = b[len(`{"text":"`):]
	case bytes.HasPrefix(b, []byte(`{"bytes":"`)):
		b = b[len(`{"bytes":"`):]
		isBytes = true
	default:
		return nil, nil, false
	}
	s, n, ok := jsonString(b)
	if !ok || n >= len(b) || b[n] != '}' {
		return nil, nil, false
	}
	if isBytes {
		dec, err := base64.StdEncoding.DecodeString(string(s))
		if err != nil {
			return nil, nil, false
		}
		s = dec
	}
	return s, b[n+1:], true
}

// jsonString decodes the JSON string body at the start of b (after the
// opening quote); n is the offset just past the closing quote.
func jsonString(b []byte) (s []byte, n int, ok bool) {
	i := 0
	for i < len(b) && b[i] != '"' && b[i] != '\\' {
		i++
	}
	if i < len(b) && b[i] == '"' {
		return b[:i], i + 1, true
	}
	out := append([]byte(nil), b[:i]...)
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return out, i + 1, true
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(b) {
			return nil, 0, false
		}
		switch e := b[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, size, good := jsonRune(b[i:])
			if !good {
				return nil, 0, false
			}
			out = utf8.AppendRune(out, r)
			i += size
			continue
		default:
			return nil, 0, false
		}
		i += 2
	}
	return nil, 0, false
}

// jsonRune decodes \uXXXX (and a following low surrogate) at the start of b.
func jsonRune(b []byte) (rune, int, bool) {
	hex4 := func(b []byte) (rune, bool) {
		if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(string(b[2:6]), 16, 32)
		return rune(v), err == nil
	}
	r, ok := hex4(b)
	if !ok {
		return 0, 0, false
	}
	if utf16.IsSurrogate(r) {
		if r2, ok2 := hex4(b[6:]); ok2 {
			if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
				return dec, 12, true
			}
		}
		return utf8.RuneError, 6, true
	}
	return r, 6, true
}

// cappedBuffer keeps the first max bytes written to it and drops the rest.
type cappedBuffer struct {
	max int
	buf bytes.Buffer
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string { return c.buf.String() }
func (c *cappedBuffer) Len() int       { return c.buf.Len() }
