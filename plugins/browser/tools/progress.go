package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/yagent/yagent/internal/clock"
	"github.com/yagent/yagent/sdk"
)

// waitBeat is how often a browser wait tells the client it still waits.
const waitBeat = time.Second

// waitClock is the time the wait reports see; tests replace it to drive
// them without sleeping.
var waitClock clock.Clock = clock.Real{}

// reportWaiting tells the call's client, every waitBeat until stop is
// called, what the call waits for and for how long: `waiting for what
// (1.5 s of 10 s)`, progress the seconds waited, total the limit in
// seconds (0 when there is none). stop returns once nothing more is
// reported.
func reportWaiting(ctx context.Context, what string, limit time.Duration) (stop func()) {
	start := waitClock.Now()
	last := 0.0
	return clock.Every(waitClock, waitBeat, func(now time.Time) {
		waited := now.Sub(start)
		secs := waited.Seconds()
		if secs <= last {
			return // MCP wants progress to grow with each notification
		}
		last = secs
		msg := fmt.Sprintf("waiting for %s (%s)", what, seconds(waited))
		if limit > 0 {
			msg = fmt.Sprintf("waiting for %s (%s of %s)", what, seconds(waited), seconds(limit))
		}
		sdk.ReportProgress(ctx, msg, secs, limit.Seconds())
	})
}

// seconds is like 1.5 s, 10 s.
func seconds(d time.Duration) string {
	s := fmt.Sprintf("%.1f", d.Seconds())
	return strings.TrimSuffix(s, ".0") + " s"
}

// waitingFor says what browser_wait_for waits for.
func waitingFor(text, gone string, limit time.Duration) string {
	var what []string
	if text != "" {
		what = append(what, fmt.Sprintf("%q to appear", text))
	}
	if gone != "" {
		what = append(what, fmt.Sprintf("%q to disappear", gone))
	}
	if len(what) == 0 {
		return seconds(limit) + " to pass"
	}
	return strings.Join(what, " and ")
}
