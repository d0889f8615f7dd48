package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"fmt"
	"hash"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/yagent/yagent/plugins/fs/internal/textenc"
	"github.com/yagent/yagent/sdk"
)

// The read budget of docs/ARCHITECTURE.md#core-rules §14, vars so tests can
// reach the branches past each limit without files of hundreds of megabytes.
var (
	// maxReadLines is the most lines one read_file call returns.
	maxReadLines = 2000
	// maxReadContentBytes is the most content bytes one call returns;
	// whichever of the two limits comes first ends the window.
	maxReadContentBytes = 256 << 10
	// maxFileSizeForRead: larger files are refused outright.
	maxFileSizeForRead int64 = 4 << 30
	// maxHashOnRead: files up to this size are read to their end and
	// hashed, so an edit can tell whether they changed since; larger ones
	// are recorded by size and modification time.
	maxHashOnRead int64 = 64 << 20
)

//go:embed read_file.md
var readFileDoc string

type readFileInput struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// ReadFileData is read_file's structured result.
type ReadFileData struct {
	Path       string `json:"path"`
	FirstLine  int    `json:"first_line,omitempty"`
	LastLine   int    `json:"last_line,omitempty"`
	TotalLines *int   `json:"total_lines,omitempty"`
	NextOffset int    `json:"next_offset,omitempty"`
	Truncated  string `json:"truncated,omitempty"`
	Encoding   string `json:"encoding,omitempty"`
	Binary     bool   `json:"binary,omitempty"`
	MIMEType   string `json:"mime_type,omitempty"`
	Size       int64  `json:"size"`
}

func (s *Service) readFileTool() sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        "read_file",
		Description: readFileDoc,
		Brief:       "Read a window of lines from a text file.",
		Effect:      sdk.EffectRead,
		ReadOnly:    true,
		Roles:       map[string]sdk.Role{"path": sdk.RolePathRead},
	}, s.readFile)
}

func (s *Service) readFile(ctx context.Context, in readFileInput) (*sdk.Result, error) {
	if in.Offset < 0 {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "offset %d is negative: lines are numbered from 1", in.Offset)
	}
	if in.Limit < 0 {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "limit %d is negative: give a number of lines, or leave it out", in.Limit)
	}
	offset := max(in.Offset, 1)
	limit := maxReadLines
	if in.Limit > 0 && in.Limit < maxReadLines {
		limit = in.Limit
	}

	c, err := s.begin(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	defer c.close()
	t := c.target
	in.Path = c.shown
	if !t.Exists {
		return nil, sdk.Errorf(sdk.CodeNotFound, "%s does not exist", in.Path)
	}
	unlock := s.lock(t.Abs)
	defer unlock()

	f, fi, err := openRegular("read_file", in.Path, t)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := ReadFileData{Path: in.Path, Size: fi.Size()}
	if fi.Size() > maxFileSizeForRead {
		return nil, sdk.Errorf(sdk.CodeInvalidInput,
			"%s is %d bytes, over the %d bytes read_file opens: search it with grep, or read a part with a shell tool (head, tail, sed -n)",
			in.Path, fi.Size(), maxFileSizeForRead)
	}

	head := sniffBufs.Get().(*[]byte)
	defer sniffBufs.Put(head)
	// A file that fits the sniffing buffer is read in one call, and read
	// no more: the pass below takes its bytes from the buffer. One whose
	// size says nothing (0, as /proc gives) is read until it ends.
	buf := *head
	if size := fi.Size(); size > 0 && size < int64(len(buf)) {
		buf = buf[:size]
	}
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("read %s: %w", in.Path, err)
	}
	whole := int64(n) == fi.Size()
	enc, binary, mime := textenc.Sniff((*head)[:n], whole)
	if binary {
		data.Binary, data.MIMEType = true, mime
		return &sdk.Result{
			Text: fmt.Sprintf("%s is a binary file (%d bytes, %s); read_file shows text only.", in.Path, fi.Size(), mime),
			Data: data,
		}, nil
	}
	var src io.Reader = bytes.NewReader((*head)[:n])
	if !whole {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("rewind %s: %w", in.Path, err)
		}
		src = f
	}

	hashAll := fi.Size() <= maxHashOnRead
	// A file whose head is plain UTF-8 may turn out GB18030 further on, as
	// the edit tools, which see it whole, would find: the pass checks the
	// rest of such a file too, and one that is not UTF-8 after all is read
	// again in the encoding the edit tools give it.
	check := enc == textenc.UTF8 && hashAll && int64(n) < fi.Size()
	w, sum, valid, err := readPass(src, enc, offset, limit, hashAll, check, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", in.Path, err)
	}
	if check && !valid {
		whole, _, err := readAll("read_file", in.Path, t, maxHashOnRead)
		if err != nil {
			return nil, err
		}
		if e, err := textenc.Detect(whole); err == nil && e != textenc.UTF8 {
			enc = e
			if w, sum, _, err = readPass(bytes.NewReader(whole), enc, offset, limit, true, false, int64(len(whole))); err != nil {
				return nil, fmt.Errorf("read %s: %w", in.Path, err)
			}
		}
	}
	if w.shown == 0 && offset > 1 {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "offset %d is past the end of %s, which has %d lines", offset, in.Path, w.total)
	}

	st := stateOfInfo(fi)
	if hashAll {
		st = fileState{hashed: true, size: fi.Size()}
		copy(st.sum[:], sum)
	}
	s.states.put(c.info.SessionID, t.Abs, st)

	res := &sdk.Result{}
	if enc != textenc.UTF8 {
		data.Encoding = enc.String()
		res.Notes = append(res.Notes, sdk.Note{Kind: "encoding", Detail: enc.String()})
	}
	if w.shown == 0 {
		res.Text = fmt.Sprintf("[read_file: %s is empty]", in.Path)
		res.Data = data
		return res, nil
	}
	data.FirstLine, data.LastLine = w.first, w.first+w.shown-1
	if w.total >= 0 {
		total := w.total
		data.TotalLines = &total
	}
	text := w.text
	if w.more || w.cutBy == "long_line" {
		if w.more {
			data.NextOffset = w.first + w.shown
		}
		data.Truncated = w.cutBy
		res.Notes = append(res.Notes, sdk.Note{Kind: "truncated", Detail: w.cutBy})
		if !bytes.HasSuffix(text, []byte("\n")) {
			text = append(text, '\n')
		}
		text = append(text, continuation(w, limit, in.Limit)...)
	}
	res.Text = string(text)
	res.Data = data
	return res, nil
}

// continuation is the line that closes a cut window: why it was cut and
// where to go on.
func continuation(w window, limit, asked int) string {
	last := w.first + w.shown - 1
	of := "more"
	if w.total >= 0 {
		of = fmt.Sprint(w.total)
	}
	var why string
	switch w.cutBy {
	case "long_line":
		why = fmt.Sprintf("line %d is %d bytes long, over the %d bytes one call shows; this is its head (search inside it with grep)", w.first, w.longLen, maxReadContentBytes)
	case "bytes":
		why = fmt.Sprintf("one call shows at most %d bytes", maxReadContentBytes)
	case "lines":
		if asked > 0 && asked == limit {
			why = fmt.Sprintf("you asked for %d lines", limit)
		} else {
			why = fmt.Sprintf("one call shows at most %d lines", limit)
		}
	}
	if !w.more {
		return fmt.Sprintf("[read_file: showed line %d of %s: %s; it is the last line]", w.first, of, why)
	}
	return fmt.Sprintf("[read_file: showed lines %d-%d of %s (%s); the file goes on: call read_file with offset=%d to continue]",
		w.first, last, of, why, last+1)
}

// sniffBufs keeps read_file's sniffing buffers across calls.
var sniffBufs = sync.Pool{New: func() any { b := make([]byte, textenc.SniffLen); return &b }}

// readPass reads the window of r, a file's bytes in enc from their start:
// hashed whole when hashAll (sum is then their sha256), and, with check,
// checked to be UTF-8 all through (valid).
func readPass(r io.Reader, enc textenc.Encoding, offset, limit int, hashAll, check bool, size int64) (w window, sum []byte, valid bool, err error) {
	var sinks []io.Writer
	var h hash.Hash
	if hashAll {
		h = sha256.New()
		sinks = append(sinks, h)
	}
	var u utf8Check
	if check {
		sinks = append(sinks, &u)
	}
	if len(sinks) > 0 {
		r = io.TeeReader(r, io.MultiWriter(sinks...))
	}
	if _, err := io.CopyN(io.Discard, r, int64(enc.BOMLen())); err != nil {
		return w, nil, false, err
	}
	if w, err = readWindow(textenc.NewReader(r, enc), offset, limit, maxReadContentBytes, hashAll, size); err != nil {
		return w, nil, false, err
	}
	if h != nil {
		sum = h.Sum(nil)
	}
	return w, sum, u.valid(), nil
}

// utf8Check is a writer that tells whether all it was given is UTF-8, a
// rune cut between two writes included.
type utf8Check struct {
	tail []byte // the start of a rune the last write cut
	bad  bool
}

func (c *utf8Check) Write(p []byte) (int, error) {
	n := len(p)
	if c.bad {
		return n, nil
	}
	for len(c.tail) > 0 && len(p) > 0 && !utf8.FullRune(c.tail) {
		c.tail, p = append(c.tail, p[0]), p[1:]
	}
	if len(c.tail) > 0 {
		if !utf8.FullRune(c.tail) {
			return n, nil // still short of a whole rune: the next write goes on
		}
		if r, size := utf8.DecodeRune(c.tail); r == utf8.RuneError && size <= 1 {
			c.bad = true
			return n, nil
		}
		c.tail = c.tail[:0]
	}
	cut := len(p)
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				cut = i
			}
			break
		}
	}
	if !utf8.Valid(p[:cut]) {
		c.bad = true
		return n, nil
	}
	c.tail = append(c.tail, p[cut:]...)
	return n, nil
}

// valid reports whether everything written was UTF-8, ending on a whole
// rune.
func (c *utf8Check) valid() bool { return !c.bad && len(c.tail) == 0 }
