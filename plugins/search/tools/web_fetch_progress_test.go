package tools

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yagent/yagent/plugins/search/internal/fetch"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/plugintest"
)

// useFetchClock makes web_fetch read the time from now and its heartbeats
// tick on tick (nil: never) until the test ends. Tests calling it are not
// parallel: the clock is the package's.
func useFetchClock(t *testing.T, now func() time.Time, tick chan time.Time) (tickers, stops *atomic.Int32) {
	old := fetchClock
	c := &testClock{now: now, tick: tick, tickers: &atomic.Int32{}, stops: &atomic.Int32{}}
	fetchClock = c
	t.Cleanup(func() { fetchClock = old })
	return c.tickers, c.stops
}

// testClock tells the time from now and ticks on tick, counting the
// tickers made and stopped.
type testClock struct {
	now            func() time.Time
	tick           chan time.Time
	tickers, stops *atomic.Int32
}

func (c *testClock) Now() time.Time { return c.now() }

func (c *testClock) Ticker(time.Duration) (<-chan time.Time, func()) {
	c.tickers.Add(1)
	return c.tick, func() { c.stops.Add(1) }
}

// frozen is a clock that never moves; stepping moves by step at each look.
func frozen() func() time.Time {
	at := time.Now()
	return func() time.Time { return at }
}

func stepping(step time.Duration) func() time.Time {
	var mu sync.Mutex
	at := time.Now()
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		at = at.Add(step)
		return at
	}
}

// fetchWithProgress serves a 30 KiB HTML page behind a redirect and
// fetches it through web_fetch over gRPC; it returns the progress reports.
func fetchWithProgress(t *testing.T) (reports []sdk.Progress, host string) {
	t.Helper()
	page := "<html><body><p>" + strings.Repeat("x", 30<<10-len("<html><body><p></p></body></html>")) + "</p></body></html>"
	mux := http.NewServeMux()
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/page", http.StatusFound) })
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", strconv.Itoa(len(page)))
		w.Write([]byte(page))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := plugintest.Start(t, sdk.Plugin{Name: "search", Version: "0", Tools: []sdk.Tool{WebFetch(Config{Fetch: &fetch.Options{Timeout: 10 * time.Second}})}}, loopbackGranted)
	info := sdk.CallInfo{ID: "fetch-1", SessionID: "s1"}
	if _, err := c.Call(context.Background(), "web_fetch", info, map[string]any{"url": srv.URL + "/start"}); err != nil {
		t.Fatalf("web_fetch: %v", err)
	}
	reports = c.Host.Progress(info.ID)
	for i, p := range reports {
		if i > 0 && p.Progress <= reports[i-1].Progress {
			t.Errorf("report %d %+v after %+v: progress must grow", i, p, reports[i-1])
		}
	}
	return reports, strings.TrimPrefix(srv.URL, "http://")
}

var downloading = regexp.MustCompile(`^HTTP 200, \d+ (B|KiB) of 30 KiB$`)

// TestWebFetch_ReportsWhatItWaitsFor: the connection to the host (each hop
// of a redirect), the body as it comes in bytes of the length, at most one
// report per 250 ms, and the conversion of the HTML.
func TestWebFetch_ReportsWhatItWaitsFor(t *testing.T) {
	useFetchClock(t, frozen(), nil)
	got, host := fetchWithProgress(t)
	var msgs []string
	for _, p := range got {
		msgs = append(msgs, p.Message)
	}
	if len(got) != 4 || msgs[0] != "connecting to "+host || msgs[1] != "connecting to "+host ||
		!downloading.MatchString(msgs[2]) || msgs[3] != "HTTP 200, 30 KiB read; converting the HTML to Markdown" {
		t.Fatalf("reports %q; want two connections (the redirect's and the page's), one download report (the clock stands still: the rest are throttled) and the conversion", msgs)
	}
	if got[2].Total != 30<<10 || got[2].Progress <= 0 || got[2].Progress > 30<<10 {
		t.Errorf("download report %+v, want progress in bytes of total %d", got[2], 30<<10)
	}
}

// TestWebFetch_ReportsTheWholeDownload: when the clock moves, the download
// is reported to its last byte.
func TestWebFetch_ReportsTheWholeDownload(t *testing.T) {
	useFetchClock(t, stepping(time.Second), nil)
	got, _ := fetchWithProgress(t)
	var found bool
	for _, p := range got {
		if p.Message == "HTTP 200, 30 KiB of 30 KiB" && p.Progress == 30<<10 && p.Total == 30<<10 {
			found = true
		}
	}
	if !found {
		t.Errorf("reports %+v, want one of 30 KiB of 30 KiB", got)
	}
}

// TestWebFetch_ReportsTheWaitForAnAnswer: while the server has not
// answered, web_fetch says every second how long it has waited, and stops
// before the answer comes back.
func TestWebFetch_ReportsTheWaitForAnAnswer(t *testing.T) {
	now := frozen()
	tick := make(chan time.Time)
	tickers, stops := useFetchClock(t, now, tick)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("late\n"))
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	c := plugintest.Start(t, sdk.Plugin{Name: "search", Version: "0", Tools: []sdk.Tool{WebFetch(Config{Fetch: &fetch.Options{Timeout: 30 * time.Second}})}}, loopbackGranted)
	info := sdk.CallInfo{ID: "fetch-late", SessionID: "s1"}
	type done struct {
		err     error
		stopped bool
	}
	ch := make(chan done, 1)
	go func() {
		_, err := c.Call(context.Background(), "web_fetch", info, map[string]any{"url": srv.URL + "/late"})
		ch <- done{err: err, stopped: tickers.Load() == stops.Load()}
	}()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, at := range []time.Duration{time.Second, 2 * time.Second} {
		select {
		case tick <- now().Add(at):
		case <-time.After(10 * time.Second):
			t.Fatal("web_fetch never waited on its heartbeat")
		}
	}
	want := []string{"connecting to " + host, "waiting for " + host + " to answer (1 s)", "waiting for " + host + " to answer (2 s)"}
	deadline := time.After(10 * time.Second)
	for len(c.Host.Progress(info.ID)) < len(want) {
		select {
		case <-deadline:
			t.Fatalf("reports %+v, want %q", c.Host.Progress(info.ID), want)
		case <-time.After(10 * time.Millisecond):
		}
	}
	close(release)
	d := <-ch
	if d.err != nil {
		t.Fatalf("web_fetch: %v", d.err)
	}
	if !d.stopped {
		t.Error("the heartbeat still ran when web_fetch returned")
	}
	want = append(want, "HTTP 200, 5 B of 5 B") // the answer's body, plain text: nothing to convert
	got := c.Host.Progress(info.ID)
	if len(got) != len(want) {
		t.Fatalf("reports %+v, want %q", got, want)
	}
	for i, p := range got {
		if p.Message != want[i] || (i > 0 && p.Progress <= got[i-1].Progress) {
			t.Errorf("report %d = %+v, want %q, its progress grown", i, p, want[i])
		}
	}
}

// loopbackGranted grants the test servers' host, as a profile's
// network.allow would: the host's guard asks for any other.
var loopbackGranted = &plugintest.Options{Policy: &policy.Rules{Network: policy.NetworkRules{Allow: []string{"127.0.0.1"}}}}
