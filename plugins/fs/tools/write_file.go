package tools

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/yagent/yagent/plugins/fs/internal/atomicfile"
	"github.com/yagent/yagent/plugins/fs/internal/edit"
	"github.com/yagent/yagent/plugins/fs/internal/textenc"
	"github.com/yagent/yagent/plugins/fs/internal/udiff"
	"github.com/yagent/yagent/plugins/fs/internal/wsroot"
	"github.com/yagent/yagent/sdk"
)

//go:embed write_file.md
var writeFileDoc string

type writeFileInput struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// WriteFileData is write_file's structured result.
type WriteFileData struct {
	Path     string `json:"path"`
	Created  bool   `json:"created"`
	Bytes    int    `json:"bytes"`
	Lines    int    `json:"lines"`
	Encoding string `json:"encoding,omitempty"`
}

func (s *Service) writeFileTool() sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        "write_file",
		Description: writeFileDoc,
		Brief:       "Create or overwrite a file.",
		Effect:      sdk.EffectWrite,
		Roles:       map[string]sdk.Role{"path": sdk.RolePathWrite},
	}, s.writeFile)
}

func (s *Service) writeFile(ctx context.Context, in writeFileInput) (*sdk.Result, error) {
	c, err := s.begin(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	defer c.close()
	t := c.target
	in.Path = c.shown
	unlock := s.lock(t.Abs)
	defer unlock()

	var (
		old     []byte
		oldInfo fs.FileInfo
	)
	existed := t.Exists
	if existed {
		old, oldInfo, err = readAll("write_file", in.Path, t, maxEditFileSize)
		if err != nil {
			return nil, err
		}
		if st, ok := s.states.get(c.info.SessionID, t.Abs); ok && !st.matches(old, oldInfo) {
			return nil, errConflict(in.Path, "file changed on disk since you last read or wrote it")
		}
	}

	content, enc, notes := shape(in.Path, in.Content, existed, old)
	newRaw, err := textenc.Encode(content, enc)
	if err != nil {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "content cannot be written as %s (the file's encoding): %v", enc, err)
	}
	data := WriteFileData{Path: in.Path, Created: !existed, Bytes: len(newRaw), Lines: countTextLines(content)}
	if enc != textenc.UTF8 {
		data.Encoding = enc.String()
	}
	if existed && bytes.Equal(old, newRaw) {
		s.states.put(c.info.SessionID, t.Abs, stateOfBytes(newRaw))
		return &sdk.Result{Text: fmt.Sprintf("%s already has this content; nothing written.", in.Path), Data: data, Notes: notes}, nil
	}
	if !existed {
		if err := t.Root.MkdirAll(filepath.Dir(t.Rel), 0o777); err != nil {
			return nil, wsroot.Describe(in.Path, err)
		}
	}
	if err := s.commit(ctx, in.Path, t, old, existed, newRaw, atomicfile.Options{Replaces: oldInfo}); err != nil {
		return nil, err
	}
	s.states.put(c.info.SessionID, t.Abs, stateOfBytes(newRaw))

	verb := "Overwrote"
	if !existed {
		verb = "Created"
	}
	text := fmt.Sprintf("%s %s (%d lines, %d bytes).", verb, in.Path, data.Lines, data.Bytes)
	if len(t.Via) > 0 {
		text += fmt.Sprintf(" %s is a symlink; its target %s was written.", in.Path, c.info.Temp.Shown(t.Abs))
	}
	return &sdk.Result{Text: text, Data: data, Notes: notes}, nil
}

// shape gives new content the conventions of the file it replaces: its
// encoding and byte order mark, and its line ending when the file used one
// kind throughout; a file that mixes them keeps the ending of each line the
// content keeps (keepEndings). A new file gets UTF-8 and its name's line
// ending (CRLF for .bat and .cmd).
func shape(path, content string, existed bool, old []byte) (string, textenc.Encoding, []sdk.Note) {
	var notes []sdk.Note
	style := textenc.NewFileStyle(path)
	enc := textenc.UTF8
	var oldText string
	if existed {
		style = textenc.NoEndings
		if e, err := textenc.Detect(old); err == nil {
			enc = e
			if t, err := textenc.Decode(old, e); err == nil {
				oldText = t
				style = textenc.CountEndings(oldText).Style()
			}
			if enc != textenc.UTF8 {
				notes = append(notes, sdk.Note{Kind: "encoding", Detail: enc.String() + " kept"})
			}
		} else if len(old) > 0 {
			notes = append(notes, sdk.Note{Kind: "encoding", Detail: "utf-8 (the old content was not text in a known encoding)"})
		}
	}
	if enc.HasBOM() {
		// The file's mark is written by Encode; content repeating it would
		// become a second one.
		content = strings.TrimPrefix(content, "\uFEFF")
	}
	switch style {
	case textenc.LF, textenc.CRLF, textenc.CR:
		if conv := textenc.Apply(content, style); conv != content {
			notes = append(notes, sdk.Note{Kind: edit.KindLineEndings, Detail: style.String() + "-applied"})
			content = conv
		}
	case textenc.Mixed:
		if kept, ok := keepEndings(oldText, content); ok {
			if kept != content {
				notes = append(notes, sdk.Note{Kind: edit.KindLineEndings, Detail: mixedKept})
			}
			content = kept
		} else if strings.Contains(content, "\n") {
			notes = append(notes, sdk.Note{Kind: edit.KindLineEndings, Detail: edit.MixedNotConverted})
		}
	}
	return content, enc, notes
}

// mixedKept notes that a file mixing line endings kept each line's own.
const mixedKept = "mixed-kept-per-line"

// keepEndings gives the lines of content that an old line survives in
// (aligned as a line diff aligns them, compared without their breaks) that
// old line's break, "\r\n" or "\n": only the lines the content really
// changes get a break decided anew, so a rewrite of a file that mixes them
// shows in a diff as the lines it changed. A changed or added line takes
// the break of the kept line before it, or else after it; content's last
// line keeps having none if it has none. ok is false when no line is kept:
// there is then nothing to carry over, and content stays as written.
func keepEndings(old, content string) (string, bool) {
	split := func(s string) (texts, breaks []string) {
		for len(s) > 0 {
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				texts, breaks = append(texts, s), append(breaks, "")
				break
			}
			t, br := s[:i], "\n"
			if strings.HasSuffix(t, "\r") {
				t, br = t[:len(t)-1], "\r\n"
			}
			texts, breaks = append(texts, t), append(breaks, br)
			s = s[i+1:]
		}
		return texts, breaks
	}
	oldTexts, oldBreaks := split(old)
	newTexts, newBreaks := split(content)
	match := udiff.Matches(oldTexts, newTexts)
	// keptBreak is the break the old line that line j keeps ends with; ""
	// for a changed line, or one the old text ended without a break.
	keptBreak := func(j int) string {
		if match[j] < 0 {
			return ""
		}
		return oldBreaks[match[j]]
	}
	breaks := make([]string, len(newTexts))
	kept := false
	for j := range breaks {
		if newBreaks[j] == "" {
			continue // the last line, as written: with no break
		}
		if br := keptBreak(j); br != "" {
			breaks[j], kept = br, true
			continue
		}
		breaks[j] = newBreaks[j]
		before, after := "", ""
		for k := j - 1; k >= 0 && before == ""; k-- {
			before = keptBreak(k)
		}
		for k := j + 1; k < len(breaks) && before == "" && after == ""; k++ {
			after = keptBreak(k)
		}
		if before != "" {
			breaks[j] = before
		} else if after != "" {
			breaks[j] = after
		}
	}
	if !kept {
		return content, false
	}
	var b strings.Builder
	b.Grow(len(content) + len(newTexts))
	for j, t := range newTexts {
		b.WriteString(t)
		b.WriteString(breaks[j])
	}
	return b.String(), true
}

func countTextLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
