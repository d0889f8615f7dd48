package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/yagent/yagent/sdk"
)

// foreground is the program a task's terminal hands typed text to.
type foreground struct {
	pgrp    int    // its process group; 0 when unknown
	program string // the file it runs; "" when unknown
	shell   bool   // every process of the group runs a shell's file
	reading bool   // the program sleeps waiting for input: the first line typed is its own
	dir     string // the working folder of the group's first process
}

// line is what a task's shell has been typed since it last ran a line: the
// unit judged, so that a command split over several writes is judged whole.
type line struct {
	pgrp int // the foreground group it was typed to; another group starts over
	text string
	// edited: keys changed the text (backspace, space) since it was judged.
	edited bool
	// unseen: keys whose effect nobody can know changed it (completion,
	// history, cursor moves).
	unseen bool
}

// typing is one write_stdin applied to a line.
type typing struct {
	next   line   // the line after the write
	judged string // the lines the write completes and the text it leaves, joined by newlines
	// judge: the write types text, or submits a line keys changed.
	judge  bool
	unseen bool // a submitted or left line holds text nobody saw
}

// apply types input and then presses keys on l.
func (l line) apply(input string, keys []string) typing {
	var w typing
	var done []string
	cur := l
	submit := func() {
		done = append(done, cur.text)
		if cur.edited {
			w.judge = true
		}
		if cur.unseen {
			w.judge, w.unseen = true, true
		}
		cur = line{pgrp: l.pgrp}
	}
	for _, r := range input {
		if r == '\r' || r == '\n' {
			submit()
			continue
		}
		if r < 0x20 || r == 0x7f {
			// A control character is a line-editing key to the terminal
			// or readline (^U kills the line, ^W a word, DEL a letter):
			// what the shell will run is not the text judged.
			cur.unseen = true
		}
		cur.text += string(r)
	}
	if input != "" {
		w.judge = true
	}
	for _, k := range keys {
		switch normalizeKey(k) {
		case "enter":
			submit()
		case "ctrl-c":
			cur = line{pgrp: l.pgrp} // the shell drops the line
		case "space":
			cur.text += " "
			cur.edited = true
		case "backspace":
			if r := []rune(cur.text); len(r) > 0 {
				cur.text = string(r[:len(r)-1])
			}
			cur.edited = true
		case "tab", "up", "down", "left", "right", "esc":
			cur.unseen = true
		}
	}
	if w.judge && cur.unseen {
		w.unseen = true
	}
	w.judged = strings.Join(append(done, cur.text), "\n")
	w.next = cur
	if w.judge {
		// What is left typed has been judged with this write.
		w.next.edited = false
	}
	return w
}

// foreground returns the program reading t's terminal.
func (t *task) foreground() foreground {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.master == nil {
		return foreground{}
	}
	fg := foregroundOf(t.master)
	if fg.pgrp > 0 {
		fg.dir, _ = filepath.EvalSymlinks(filepath.Join("/proc", strconv.Itoa(fg.pgrp), "cwd"))
		if fg.dir == "" {
			fg.dir, _ = os.Readlink(filepath.Join("/proc", strconv.Itoa(fg.pgrp), "cwd"))
		}
	}
	return fg
}

// approveStdin asks the host whether input and keys may be typed into t,
// and returns how t's line and the text ahead (typed, not yet read) will
// be once they are. Text is always judged, and so is a shell line that
// keys changed when they submit it; keys alone (ctrl-c, enter on a judged
// line) need nobody. Nothing is typed unless the host approves: a refusal
// is denied, nobody to ask is needs_auth.
func (m *Manager) approveStdin(ctx context.Context, t *task, input string, keys []string) (typed, error) {
	fg := t.foreground()
	cur := t.line
	if cur.pgrp != fg.pgrp || fg.pgrp == 0 {
		cur = line{pgrp: fg.pgrp}
	}
	if fg.shell && t.ahead != "" {
		// Text typed while nobody read it waits in the terminal still: the
		// shell reads it first, as the start of its line.
		cur.text, cur.edited = t.ahead+cur.text, true
	}
	w := cur.apply(input, keys)
	out := typed{line: w.next}
	req := sdk.ApprovalRequest{Kind: sdk.ApprovalStdin, TaskID: t.id, Program: fg.program, Shell: fg.shell}
	switch {
	case fg.shell && !w.judge:
		return out, nil
	case fg.shell:
		req.Input, req.Dir, req.Unseen = w.judged, fg.dir, w.unseen
	default:
		// The text is the program's, or waits as text ahead: no shell line.
		out.line = line{pgrp: fg.pgrp}
		text := keyText(input, keys)
		if fg.reading {
			// The program reads the first line; the rest waits for
			// whoever reads after it, perhaps a shell that line starts.
			_, out.ahead, _ = strings.Cut(text, "\n")
		} else {
			out.ahead = t.ahead + text
		}
		if input == "" {
			return out, nil // keys to a program: nothing it can run
		}
		req.Input, req.Ahead = input, out.ahead
	}
	prog := fg.program
	if prog == "" {
		prog = "the program in its foreground"
	}
	req.Reason = fmt.Sprintf("type %q into %s (task %s)", req.Input, prog, t.id)
	req.Command = req.Input
	resp, err := sdk.HostFrom(ctx).RequestApproval(ctx, req)
	switch {
	case err != nil && ctx.Err() != nil:
		return typed{}, sdk.Errorf(sdk.CodeCancelled, "write_stdin was cancelled while the input waited for approval; nothing was written to task %s", t.id)
	case err != nil:
		return typed{}, sdk.Errorf(sdk.CodeToolFailed, "write_stdin could not ask the host about the input (%v); nothing was written to task %s", err, t.id)
	case resp.Approved:
		// The answer may have taken minutes: the input goes only to the
		// reader it was judged for.
		if now := t.foreground(); now.pgrp != fg.pgrp || now.program != fg.program || now.shell != fg.shell {
			return typed{}, sdk.Errorf(sdk.CodeToolFailed, "nothing was written to task %s: the program reading its terminal changed while the input waited for approval (now %s). Read the task's output with shell_wait and send the input again", t.id, orUnknown(now.program))
		}
		return out, nil
	case resp.Unanswered:
		return typed{}, sdk.Errorf(sdk.CodeNeedsAuth, "nothing was written to task %s: %s. To allow such input the user can start yagent with -y; until then, type into a shell only what run_bash would run without asking, or choose another way", t.id, resp.Reason)
	}
	return typed{}, sdk.Errorf(sdk.CodeDenied, "nothing was written to task %s: %s. Do not retry the same input", t.id, resp.Reason)
}

// typed is a task's input state after a write: its shell line and the
// text ahead of any reader.
type typed struct {
	line  line
	ahead string
}

// keyText is input and keys as the text a program reads, line ends as
// newlines; keys that are no text are left out.
func keyText(input string, keys []string) string {
	var b strings.Builder
	b.WriteString(strings.ReplaceAll(input, "\r", "\n"))
	for _, k := range keys {
		switch normalizeKey(k) {
		case "enter":
			b.WriteByte('\n')
		case "space":
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func orUnknown(prog string) string {
	if prog == "" {
		return "unknown"
	}
	return prog
}
