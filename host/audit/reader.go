package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/yagent/yagent/host/netproxy"
)

// The folder's file names: the live file, and the rotated ones whose names
// carry the UTC time they were rotated, so they sort in time order.
const (
	readLiveName      = "audit.jsonl"
	readRotatedPrefix = "audit-"
	readRotatedSuffix = ".jsonl"
	readRotatedLayout = "20060102T150405.000000000Z"
)

// maxLineBytes bounds one line in memory; a longer one is corrupt (the
// writer replaces any long string by its digest).
const maxLineBytes = 1 << 20

// Line is one line of the audit log, decoded. Raw keeps the line as stored,
// fields this reader does not know included.
type Line struct {
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"`
	Call    string    `json:"call"`
	Session string    `json:"session"`
	Client  string    `json:"client"`
	Tool    string    `json:"tool"`
	Family  string    `json:"family"`
	Effect  string    `json:"effect"`

	// Kind "decision".
	Trusted  bool                       `json:"trusted"`
	Args     map[string]json.RawMessage `json:"args"`
	Decision string                     `json:"decision"`
	Basis    string                     `json:"basis"`
	Rule     string                     `json:"rule"`
	Reason   string                     `json:"reason"`
	Paths    []string                   `json:"paths"`
	Answer   *LineAnswer                `json:"answer"`
	Allowed  *bool                      `json:"allowed"`

	// Kind "call".
	Code       string  `json:"code"`
	DurationMS float64 `json:"duration_ms"`
	Bytes      int64   `json:"bytes"`

	// Kind "approval".
	Ask     string   `json:"ask"`
	Program string   `json:"program"`
	Argv    []string `json:"argv"`
	Command string   `json:"command"`

	// Kind "network" (with Decision, Rule, Reason, Answer, Allowed and
	// DurationMS above).
	Host   string `json:"host"`
	Port   int    `json:"port"`
	Proto  string `json:"proto"`
	Method string `json:"method"`
	Addr   string `json:"addr"`
	Up     int64  `json:"up"`
	Down   int64  `json:"down"`

	Raw  []byte `json:"-"` // the line as stored, without its newline
	File string `json:"-"` // the file it was read from
	No   int    `json:"-"` // its line number there, from 1
}

// LineAnswer is an ask's answer and who gave it.
type LineAnswer struct {
	Approved bool   `json:"approved"`
	By       string `json:"by"`
	Reason   string `json:"reason"`
}

// The values a Filter's closed fields take.
var (
	Kinds     = []string{"decision", "call", "approval", "network"}
	Decisions = []string{"allow", "ask", "deny"}
	AnswerBys = []string{"user", "session_pass", "project_pass", "yolo_pass", "nobody", netproxy.ByNavigation, netproxy.ByPage}
)

// Filter selects lines; a zero field selects every line.
type Filter struct {
	Session  string // the session id, or a prefix of it (the text output shows it short)
	Tool     string
	Kind     string // decision, call, approval or network
	Decision string // allow, ask or deny: lines of kind "decision" or "network" only
	By       string // who answered an ask: lines with an answer only
	Code     string // the result code: lines of kind "call" only
	Failed   bool   // calls whose code is not empty
	Since    time.Time
	Until    time.Time // exclusive
}

// Check says which field holds a value the format does not know.
func (f Filter) Check() error {
	for _, c := range []struct {
		flag, v string
		allowed []string
	}{
		{"kind", f.Kind, Kinds}, {"decision", f.Decision, Decisions}, {"by", f.By, AnswerBys},
	} {
		if c.v != "" && !slices.Contains(c.allowed, c.v) {
			return fmt.Errorf("unknown %s %q: use one of %s", c.flag, c.v, strings.Join(c.allowed, ", "))
		}
	}
	if f.Code != "" && f.Failed {
		return errors.New("a code and failed together: a code selects one failure, failed every one; give one of them")
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		return fmt.Errorf("until %s is not after since %s", f.Until.Format(time.RFC3339), f.Since.Format(time.RFC3339))
	}
	return nil
}

// Match reports whether l passes every field of f.
func (f Filter) Match(l *Line) bool {
	switch {
	case f.Session != "" && !strings.HasPrefix(l.Session, f.Session):
		return false
	case f.Tool != "" && l.Tool != f.Tool:
		return false
	case f.Kind != "" && l.Kind != f.Kind:
		return false
	case f.Decision != "" && (l.Kind != "decision" && l.Kind != "network" || l.Decision != f.Decision):
		return false
	case f.By != "" && (l.Answer == nil || l.Answer.By != f.By):
		return false
	case f.Code != "" && (l.Kind != "call" || l.Code != f.Code):
		return false
	case f.Failed && (l.Kind != "call" || l.Code == ""):
		return false
	case !f.Since.IsZero() && l.Time.Before(f.Since):
		return false
	case !f.Until.IsZero() && !l.Time.Before(f.Until):
		return false
	}
	return true
}

// ParseTime reads a --since or --until value: an RFC 3339 time, or a
// duration back from now ("90s", "1h", "2d").
func ParseTime(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	d, err := parseAgo(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("time %q: give an RFC 3339 time (2026-12-01T17:00:00Z) or a duration back from now (30m, 1h, 2d)", s)
	}
	return now.Add(-d), nil
}

func parseAgo(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if _, err := fmt.Sscanf(days, "%d", &n); err != nil || fmt.Sprint(n) != days {
			return 0, errors.New("not a number of days")
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// Reader reads an audit folder.
type Reader struct {
	Dir    string
	Filter Filter
	// Warn hears of each line skipped as corrupt, with its file and line
	// number; nil drops them.
	Warn func(error)
	// Saw hears of every well-formed line, matched or not, before the
	// filter (the CLI remembers each call's argument for its call line).
	Saw func(*Line)
	// Poll is how often Follow looks for new lines; 0 means 200 ms.
	Poll time.Duration
}

// ErrNoFolder is returned when the audit folder does not exist.
var ErrNoFolder = errors.New("no audit folder")

// Files lists the folder's log files oldest first: the rotated ones by
// name, then the live one if it exists.
func (r *Reader) Files() ([]string, error) {
	// A listing taken while the writer renames the live file may miss an
	// entry (the directory changes under it); one during which the live
	// file stayed the same file saw every rotated file, as those are never
	// renamed again. List until one does (a few times at most), and take
	// the union.
	live := filepath.Join(r.Dir, readLiveName)
	names := map[string]bool{}
	for range 5 {
		before, errBefore := os.Stat(live)
		ents, err := os.ReadDir(r.Dir)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("%w at %s", ErrNoFolder, r.Dir)
			}
			return nil, fmt.Errorf("audit: %w", err)
		}
		for _, e := range ents {
			if name := e.Name(); e.Type().IsRegular() && (name == readLiveName || isRotated(name)) {
				names[name] = true
			}
		}
		after, errAfter := os.Stat(live)
		if errBefore != nil && errAfter != nil || errBefore == nil && errAfter == nil && os.SameFile(before, after) {
			break
		}
	}
	var rotated []string
	for name := range names {
		if name != readLiveName {
			rotated = append(rotated, name)
		}
	}
	slices.Sort(rotated)
	var files []string
	for _, name := range rotated {
		files = append(files, filepath.Join(r.Dir, name))
	}
	if names[readLiveName] {
		files = append(files, filepath.Join(r.Dir, readLiveName))
	}
	return files, nil
}

// isRotated reports whether name is a rotated file's: audit-<UTC time>.jsonl.
func isRotated(name string) bool {
	_, ok := rotatedAt(name)
	return ok
}

// rotatedAt is the time a rotated file's name carries; ok is false for the
// live file or a name out of the format.
func rotatedAt(path string) (time.Time, bool) {
	stamp, ok := strings.CutPrefix(filepath.Base(path), readRotatedPrefix)
	if !ok {
		return time.Time{}, false
	}
	if stamp, ok = strings.CutSuffix(stamp, readRotatedSuffix); !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(readRotatedLayout, stamp)
	return t, err == nil
}

// Read hands emit each line that matches r.Filter, in time order, and
// stops at the first error emit returns.
func (r *Reader) Read(ctx context.Context, emit func(*Line) error) error {
	files, err := r.Files()
	if err != nil {
		return err
	}
	for _, path := range files {
		if err := r.readFile(ctx, path, emit); err != nil {
			return err
		}
	}
	return nil
}

// skipFile reports whether every line of path is older than the filter's
// since: a rotated file holds no line after the time in its name.
func (r *Reader) skipFile(path string) bool {
	at, ok := rotatedAt(path)
	return ok && !r.Filter.Since.IsZero() && at.Before(r.Filter.Since)
}

func (r *Reader) readFile(ctx context.Context, path string, emit func(*Line) error) error {
	if r.skipFile(path) {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // rotated away or removed since the listing
		}
		return fmt.Errorf("audit: %w", err)
	}
	defer f.Close()
	s := lineSplitter{file: path}
	br := bufio.NewReader(f)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		raw, long, err := s.next(br)
		if long {
			r.warn(fmt.Errorf("%s:%d: line over %d bytes, skipped", path, s.no, maxLineBytes))
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				// A line without its newline is one the writer is still
				// writing, or one a crash cut short: either way not a line.
				if s.pending() && filepath.Base(path) != readLiveName {
					r.warn(fmt.Errorf("%s:%d: line cut short (no newline at the end of the file), skipped", path, s.no+1))
				}
				return nil
			}
			return fmt.Errorf("audit: read %s: %w", path, err)
		}
		if err := r.take(raw, path, s.no, emit); err != nil {
			return err
		}
	}
}

// take decodes one whole line and hands it on if it matches.
func (r *Reader) take(raw []byte, path string, no int, emit func(*Line) error) error {
	l, err := decodeLine(raw)
	if err != nil {
		r.warn(fmt.Errorf("%s:%d: %w, skipped", path, no, err))
		return nil
	}
	l.File, l.No = path, no
	if r.Saw != nil {
		r.Saw(l)
	}
	if !r.Filter.Match(l) {
		return nil
	}
	return emit(l)
}

func (r *Reader) warn(err error) {
	if r.Warn != nil {
		r.Warn(err)
	}
}

// decodeLine decodes one line; a line without a time or a kind is not one
// the writer wrote.
func decodeLine(raw []byte) (*Line, error) {
	l := &Line{}
	// A field of another type than this reader knows (a later writer's)
	// leaves that field zero, not the line unread: decoding goes on past it.
	var typeErr *json.UnmarshalTypeError
	if err := json.Unmarshal(raw, l); err != nil && !errors.As(err, &typeErr) {
		return nil, fmt.Errorf("not a JSON object (%v)", err)
	}
	if t := bytes.TrimLeft(raw, " \t\r"); len(t) == 0 || t[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	if l.Time.IsZero() || l.Kind == "" {
		return nil, errors.New("no time or no kind")
	}
	l.Raw = raw
	return l, nil
}

// lineSplitter cuts whole lines off a stream, keeping a line cut short by
// the end of what was written so far until its newline comes; a line over
// maxLineBytes is dropped whole and reported.
type lineSplitter struct {
	file string
	no   int    // lines cut so far
	buf  []byte // the start of a line not yet ended
	long bool   // the line in buf went over maxLineBytes
}

func (s *lineSplitter) pending() bool { return len(s.buf) > 0 || s.long }

// next returns the next whole line without its newline; io.EOF when the
// stream ends first (what came is kept for the next call). A line too long
// comes back as long, and the stream goes on after it.
func (s *lineSplitter) next(br *bufio.Reader) (line []byte, long bool, err error) {
	for {
		var chunk []byte
		chunk, err = br.ReadSlice('\n')
		if !s.long {
			s.buf = append(s.buf, chunk...)
			if len(s.buf) > maxLineBytes {
				s.long, s.buf = true, s.buf[:0]
			}
		}
		if err == nil {
			s.no++
			if s.long {
				s.long = false
				return nil, true, nil
			}
			line = bytes.TrimSuffix(s.buf, []byte("\n"))
			s.buf = nil
			return line, false, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, false, err
		}
	}
}
