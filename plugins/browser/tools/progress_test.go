package tools

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yagent/yagent/internal/clock/clocktest"
	"github.com/yagent/yagent/sdk"
)

// useClock makes the waits report on a fake clock until the test ends.
// Tests calling it are not parallel: the clock is the package's.
func useClock(t *testing.T) *clocktest.Fake {
	c := clocktest.New()
	old := waitClock
	waitClock = c
	t.Cleanup(func() { waitClock = old })
	return c
}

// waitSite serves a page whose load the test holds, and one that shows
// "Submit" once the test says so.
type waitSite struct {
	*httptest.Server
	release chan struct{}
	shown   atomic.Bool
}

func newWaitSite(t *testing.T) *waitSite {
	s := &waitSite{release: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/held", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-s.release:
		case <-r.Context().Done():
		}
		fmt.Fprint(w, "<!doctype html><title>Held</title><p>loaded at last</p>")
	})
	mux.HandleFunc("/flag", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, s.shown.Load())
	})
	mux.HandleFunc("/button", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Button</title><p>no button yet</p><script>
			const poll = setInterval(async () => {
				if (await (await fetch('/flag')).text() === 'true') {
					clearInterval(poll);
					const b = document.createElement('button'); b.textContent = 'Submit'; document.body.appendChild(b);
				}
			}, 50);</script>`)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(func() {
		select {
		case <-s.release:
		default:
			close(s.release)
		}
		s.Close()
	})
	return s
}

type waitDone struct {
	res     *sdk.Result
	err     error
	stopped bool // every reporter had stopped when the call returned
}

func (c *client) callAsync(clk *clocktest.Fake, tool, id string, in any) <-chan waitDone {
	done := make(chan waitDone, 1)
	go func() {
		res, err := c.c.Call(context.Background(), tool, sdk.CallInfo{ID: id, SessionID: c.id}, in)
		done <- waitDone{res: res, err: err, stopped: clk.Stops() == clk.Tickers()}
	}()
	return done
}

// tickUntil ticks, moving the clock on by 500 ms at each tick taken, until a progress report
// of call id matches want, for at most 20 s; it returns the reports.
func (c *client) tickUntil(clk *clocktest.Fake, id string, want *regexp.Regexp) {
	c.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		for _, p := range c.c.Host.Progress(id) {
			if want.MatchString(p.Message) {
				return
			}
		}
		select {
		case clk.Tick <- clk.Now():
			clk.Advance(500 * time.Millisecond) // once per tick taken
		case <-time.After(20 * time.Millisecond):
			// No wait reports yet (or it is busy): look again.
		case <-deadline:
			got := c.c.Host.Progress(id)
			c.t.Fatalf("no progress matching %s within 20s; %d reports, the last: %+v", want, len(got), got[max(len(got)-3, 0):])
		}
	}
}

func (c *client) checkReports(id string, d waitDone, total float64) {
	c.t.Helper()
	if d.err != nil {
		c.t.Fatalf("call: %v", d.err)
	}
	if !d.stopped {
		c.t.Error("a wait was still reporting when the call returned")
	}
	got := c.c.Host.Progress(id)
	for i, p := range got {
		if p.Total != total || (i > 0 && p.Progress <= got[i-1].Progress) {
			c.t.Errorf("report %d = %+v: want progress (seconds) growing at each report, total %v", i, p, total)
		}
	}
}

// TestWaitFor_ReportsWhatItWaitsFor: browser_wait_for says what it waits
// for, how long it has waited and the most it waits, while it waits.
func TestWaitFor_ReportsWhatItWaitsFor(t *testing.T) {
	c := browser(t)
	clk := useClock(t)
	site := newWaitSite(t)
	c.ok(NavigateName, map[string]any{"url": site.URL + "/button"})
	done := c.callAsync(clk, WaitForName, "wait-for-1", map[string]any{"text": "Submit", "time_ms": 60000})
	c.tickUntil(clk, "wait-for-1", regexp.MustCompile(`^waiting for "Submit" to appear \(1\.5 s of 60 s\)$`))
	site.shown.Store(true)
	d := <-done
	c.checkReports("wait-for-1", d, 60)
}

// TestNavigate_ReportsTheLoad: browser_navigate says which page it waits
// for while the page loads.
func TestNavigate_ReportsTheLoad(t *testing.T) {
	c := browser(t)
	clk := useClock(t)
	site := newWaitSite(t)
	url := site.URL + "/held"
	done := c.callAsync(clk, NavigateName, "navigate-1", map[string]any{"url": url})
	c.tickUntil(clk, "navigate-1", regexp.MustCompile(`^waiting for `+regexp.QuoteMeta(url)+` to load \(1 s\)$`))
	close(site.release)
	d := <-done
	c.checkReports("navigate-1", d, 0)
}
