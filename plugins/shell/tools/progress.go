package tools

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/yagent/yagent/internal/clock"
	"github.com/yagent/yagent/plugins/shell/runner"
	"github.com/yagent/yagent/sdk"
)

// How often a call waiting on a command tells the client how it goes: at
// most one report per progressEvery, and one at least every heartbeat even
// when no line came, so that a client sees a silent command is still alive.
// It looks every progressPoll, well under progressEvery, so that a line is
// told soon after the throttle allows it.
const (
	progressPoll  = 100 * time.Millisecond
	progressEvery = 250 * time.Millisecond
	heartbeat     = time.Second
	lastLineRunes = 120
)

// progressClock is the time the reporters see; tests replace it to drive
// them without sleeping.
var progressClock clock.Clock = clock.Real{}

// watchProgress returns the Watch of a call: it reports the command's
// progress to the call's client (sdk.ReportProgress) from the command's
// start until the call returns. label, when set, opens each message (the
// task a shell_wait waits on).
func watchProgress(ctx context.Context, label string) runner.Watch {
	return func(out runner.Output) func() {
		r := newReporter(ctx, out, label, progressClock)
		// Nothing is reported once the stop returns: the call's result is
		// the last thing the client hears of it.
		return clock.Every(r.clock, progressPoll, func(time.Time) { r.tick() })
	}
}

// watchTask follows the task id while a call waits on it; the function it
// returns stops following. A task that is not running is not followed.
func watchTask(ctx context.Context, m *runner.Manager, id string) (stop func()) {
	out, ok := m.Output(ctx, id)
	if !ok {
		return func() {}
	}
	return watchProgress(ctx, "task "+out.ID())(out)
}

// source is what a reporter reads: a runner.Output.
type source interface {
	Lines() int64
	LastLine() string
	Started() time.Time
}

// reporter is the progress of one call; only its goroutine uses it.
type reporter struct {
	ctx   context.Context
	out   source
	label string
	clock clock.Clock

	last     time.Time // of the last report, or the start
	reported bool      // once, the throttle applies
	lines    int64     // reported so far
	beats    int       // heartbeats since lines last grew
	progress float64   // the last value sent
}

func newReporter(ctx context.Context, out source, label string, c clock.Clock) *reporter {
	return &reporter{ctx: ctx, out: out, label: label, clock: c, last: c.Now()}
}

// tick reports when lines came, progressEvery after the last report (the
// first at once), or when heartbeat has passed with none.
func (r *reporter) tick() {
	now := r.clock.Now()
	since := now.Sub(r.last)
	if r.reported && since < progressEvery {
		return
	}
	lines := r.out.Lines()
	var p float64
	switch {
	case lines > r.lines:
		r.lines, r.beats = lines, 0
		p = float64(lines)
	case since >= heartbeat:
		// MCP wants progress to grow with every notification: a heartbeat
		// moves it within the current line, never reaching the next.
		r.beats++
		p = float64(max(r.lines, 0)) + float64(r.beats)/float64(r.beats+1)
	default:
		return
	}
	if p <= r.progress {
		return
	}
	r.progress, r.last, r.reported = p, now, true
	sdk.ReportProgress(r.ctx, r.message(lines, now), p, 0)
}

// message is like `3 lines, 1.2s: line 3`.
func (r *reporter) message(lines int64, now time.Time) string {
	var b strings.Builder
	if r.label != "" {
		b.WriteString(r.label)
		b.WriteString(": ")
	}
	if lines >= 0 {
		fmt.Fprintf(&b, "%d %s, ", lines, plural(lines, "line", "lines"))
	}
	fmt.Fprintf(&b, "%.1fs", now.Sub(r.out.Started()).Seconds())
	if last := clipRunes(r.out.LastLine(), lastLineRunes); last != "" {
		b.WriteString(": ")
		b.WriteString(last)
	}
	return b.String()
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := 0; k < n-1; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}
