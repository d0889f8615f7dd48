package pluginmgr

import (
	"bytes"
	"strings"
	"sync"
)

// stderrTail reads one plugin process's raw stderr (go-plugin copies it
// here line by line, besides logging it): it keeps the first panic line and
// the last few lines that are not JSON log entries, for crash and start-up
// error messages.
type stderrTail struct {
	mu      sync.Mutex
	partial []byte
	panic   string
	last    []string
}

const (
	tailLines    = 5
	maxLineBytes = 2048
)

func (s *stderrTail) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.partial = append(s.partial, b...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		s.line(string(s.partial[:i]))
		s.partial = s.partial[i+1:]
	}
	if len(s.partial) > 64<<10 {
		s.line(string(s.partial))
		s.partial = nil
	}
	return len(b), nil
}

func (s *stderrTail) line(l string) {
	l = strings.TrimRight(l, "\r")
	if len(l) > maxLineBytes {
		l = l[:maxLineBytes] + "…"
	}
	if s.panic == "" && (strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ")) {
		s.panic = l
	}
	if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "{") {
		return
	}
	s.last = append(s.last, l)
	if len(s.last) > tailLines {
		s.last = s.last[1:]
	}
}

// panicText returns the plugin's panic line ("panic: ..."), "" when it did
// not panic.
func (s *stderrTail) panicText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.panic
}

// lastLines returns the last lines that were not log entries.
func (s *stderrTail) lastLines() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.last, " | ")
}
