package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/yagent/yagent/plugins/fs/internal/atomicfile"
	"github.com/yagent/yagent/plugins/fs/internal/edit"
	"github.com/yagent/yagent/plugins/fs/internal/textenc"
	"github.com/yagent/yagent/plugins/fs/internal/udiff"
	"github.com/yagent/yagent/plugins/fs/internal/wsroot"
	"github.com/yagent/yagent/sdk"
)

// maxDiffLines bounds the diff shown in an edit's result.
const maxDiffLines = 300

// EditData is the structured result of search_replace_in_file and multi_edit.
type EditData struct {
	Path         string     `json:"path"`
	Replacements int        `json:"replacements"`
	Lines        []int      `json:"lines"`
	Repairs      []sdk.Note `json:"repairs,omitempty"`
	Encoding     string     `json:"encoding,omitempty"`
	Diff         string     `json:"diff,omitempty"`
}

// applyFunc computes an edit on a file's decoded text.
type applyFunc func(text string) (edit.Outcome, []int, error)

// editFile is the pipeline both edit tools share: resolve and lock the
// path, load it whole, refuse it if it changed since the session last saw
// it, decode it, apply the edit in memory, re-encode it, and replace the
// file atomically, checking just before the rename that nobody wrote it
// meanwhile.
func (s *Service) editFile(ctx context.Context, tool, path string, apply applyFunc) (*sdk.Result, error) {
	c, err := s.begin(ctx, path)
	if err != nil {
		return nil, err
	}
	defer c.close()
	t := c.target
	path = c.shown
	if !t.Exists {
		return nil, sdk.Errorf(sdk.CodeNotFound, "%s does not exist: check the path (list_dir), or create the file with write_file", path)
	}
	unlock := s.lock(t.Abs)
	defer unlock()

	raw, fi, err := readAll(tool, path, t, maxEditFileSize)
	if err != nil {
		return nil, err
	}
	if st, ok := s.states.get(c.info.SessionID, t.Abs); ok && !st.matches(raw, fi) {
		return nil, errConflict(path, "file changed on disk since you last read or wrote it")
	}
	enc, err := textenc.Detect(raw)
	if err != nil {
		return nil, refuseEncoding(path, err)
	}
	text, err := textenc.Decode(raw, enc)
	if err != nil {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "%s cannot be edited as text: %v", path, err)
	}
	out, lines, err := apply(text)
	if err != nil {
		return nil, err
	}
	newRaw, err := textenc.Encode(out.Content, enc)
	if err != nil {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "the edited text cannot be written back as %s: %v", enc, err)
	}
	if err := s.commit(ctx, path, t, raw, true, newRaw, atomicfile.Options{Replaces: fi}); err != nil {
		return nil, err
	}
	s.states.put(c.info.SessionID, t.Abs, stateOfBytes(newRaw))
	return editResult(tool, path, enc, text, out, lines), nil
}

// commit writes newRaw over t through a temp file, after the seam and the
// check that t is still as read.
func (s *Service) commit(ctx context.Context, path string, t wsroot.Target, old []byte, existed bool, newRaw []byte, opts atomicfile.Options) error {
	s.sweepDir(t)
	opts.BeforeRename = func() error {
		if hook := beforeRenameHook; hook != nil {
			hook(ctx, t.Abs)
		}
		return stillAs(path, t, existed, old)
	}
	err := atomicfile.Write(t.Root, t.Rel, newRaw, opts)
	if err == nil {
		return nil
	}
	if _, ok := sdk.AsToolError(err); ok {
		return err
	}
	return wsroot.Describe(path, err)
}

func refuseEncoding(path string, err error) error {
	var ue *textenc.UndecodableError
	switch {
	case errors.Is(err, textenc.ErrBinary):
		return sdk.Errorf(sdk.CodeInvalidInput, "%s looks binary (it holds NUL bytes): the edit tools change text files only", path)
	case errors.As(err, &ue):
		return sdk.Errorf(sdk.CodeInvalidInput, "%s cannot be edited as text: %v", path, ue)
	}
	return sdk.Errorf(sdk.CodeInvalidInput, "%s cannot be edited as text: %v", path, err)
}

func editResult(tool, path string, enc textenc.Encoding, before string, out edit.Outcome, lines []int) *sdk.Result {
	data := EditData{Path: path, Replacements: out.Replacements, Lines: lines}
	var text strings.Builder
	switch {
	case tool == "multi_edit":
		fmt.Fprintf(&text, "Edited %s: applied %d edits (%d replacements; at lines %s).", path, len(lines), out.Replacements, joinInts(lines))
	case out.Replacements == 1:
		fmt.Fprintf(&text, "Edited %s: replaced 1 occurrence at line %d.", path, out.Line)
	default:
		fmt.Fprintf(&text, "Edited %s: replaced %d occurrences (the first at line %d).", path, out.Replacements, out.Line)
	}
	res := &sdk.Result{}
	for _, r := range out.Repairs {
		n := sdk.Note{Kind: r.Kind, Detail: r.Detail}
		res.Notes = append(res.Notes, n)
		data.Repairs = append(data.Repairs, n)
	}
	if enc != textenc.UTF8 {
		data.Encoding = enc.String()
		res.Notes = append(res.Notes, sdk.Note{Kind: "encoding", Detail: enc.String() + " kept"})
	}
	if len(out.Repairs) > 0 {
		text.WriteString("\nNot an exact match — repairs applied:")
		for _, r := range out.Repairs {
			fmt.Fprintf(&text, "\n- %s: %s", r.Kind, r.Detail)
		}
		diff := capLines(udiff.Unified(path, before, out.Content, 3), maxDiffLines)
		data.Diff = diff
		text.WriteString("\nCheck the change:\n")
		text.WriteString(diff)
	}
	res.Text = text.String()
	res.Data = data
	return res
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

func capLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "") + fmt.Sprintf("… (%d more diff lines)\n", len(lines)-n)
}
