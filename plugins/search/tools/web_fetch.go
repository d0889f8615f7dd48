package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/yagent/yagent/internal/clock"
	"github.com/yagent/yagent/plugins/search/internal/fetch"
	"github.com/yagent/yagent/sdk"
)

//go:embed web_fetch.md
var webFetchDescription string

type webFetchInput struct {
	URL      string `json:"url"`
	MaxBytes int    `json:"max_bytes,omitempty"`
}

// WebFetch returns the web_fetch tool.
func WebFetch(cfg Config) sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        "web_fetch",
		Description: webFetchDescription,
		Brief:       "Fetch a URL as Markdown.",
		Effect:      sdk.EffectNetwork,
		ReadOnly:    true,
		Roles:       map[string]sdk.Role{"url": sdk.RoleURL},
	}, func(ctx context.Context, in webFetchInput) (*sdk.Result, error) {
		return runWebFetch(ctx, cfg, in)
	})
}

func runWebFetch(ctx context.Context, cfg Config, in webFetchInput) (*sdk.Result, error) {
	opts := fetch.Options{}
	if cfg.Fetch != nil {
		opts = *cfg.Fetch
	}
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = fetch.DefaultMaxBytes
	}
	var notes []sdk.Note
	switch {
	case in.MaxBytes < 0:
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "max_bytes %d is negative; leave it out for the default of %d", in.MaxBytes, limit)
	case in.MaxBytes > 0 && int64(in.MaxBytes) < limit:
		opts.MaxBytes = int64(in.MaxBytes)
	case int64(in.MaxBytes) > limit:
		notes = append(notes, sdk.Note{Kind: "clamped", Detail: fmt.Sprintf("max_bytes %d lowered to %d", in.MaxBytes, limit)})
		opts.MaxBytes = limit
	}
	proxy, err := sdk.CallFrom(ctx).Sandbox.RequestProxy()
	if err != nil {
		return nil, err
	}
	base := opts.Transport
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone() // as fetch does
	}
	if proxy != "" {
		if base, err = viaProxy(base, proxy); err != nil {
			return nil, err
		}
	}
	opts.Transport = &progressTransport{base: base, p: &fetchProgress{ctx: ctx, now: fetchClock.Now}}
	page, err := fetch.Fetch(ctx, in.URL, opts)
	var refused *proxyRefusal
	var se *fetch.StatusError
	var other *fetch.OtherHostError
	switch {
	case errors.As(err, &refused):
		return nil, &sdk.ToolError{Code: sdk.CodeDenied, Message: refused.text}
	case errors.As(err, &other):
		return nil, &sdk.ToolError{Code: "redirect_other_host", Data: other,
			Message: fmt.Sprintf("%v. web_fetch does not follow a redirect to another host, so that access to it is checked: call web_fetch with url %q to follow it", other, other.To)}
	case errors.As(err, &se):
		return nil, &sdk.ToolError{Code: "http_error",
			Message: fmt.Sprintf("%s; what it sent:\n%s", se.Error(), head(se.Page.Content, 2000)), Data: se.Page}
	case errors.Is(err, fetch.ErrScheme):
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "%v; give an absolute http:// or https:// URL (use read_file for local files)", err)
	case errors.Is(err, fetch.ErrRedirects):
		return nil, sdk.Errorf(sdk.CodeToolFailed, "%v; fetch the last URL directly if you trust it", err)
	case errors.Is(err, fetch.ErrNotText):
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "%v; web_fetch returns text and HTML only", err)
	case errors.Is(err, fetch.ErrTimeout):
		return nil, sdk.Errorf(sdk.CodeTimeout, "%v; the server may be slow or the page too large", err)
	case err != nil:
		return nil, toolError(err)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\n", page.URL)
	if len(page.Redirects) > 0 {
		fmt.Fprintf(&b, "Redirected from: %s\n", strings.Join(page.Redirects, " -> "))
	}
	if page.Title != "" {
		fmt.Fprintf(&b, "Title: %s\n", page.Title)
	}
	fmt.Fprintf(&b, "Content-Type: %s\n\n", page.ContentType)
	b.WriteString(page.Content)
	b.WriteByte('\n')
	if page.Truncated {
		detail := fmt.Sprintf("the page was cut at %d bytes", page.Bytes)
		fmt.Fprintf(&b, "\n[%s; the rest was not read]\n", detail)
		notes = append(notes, sdk.Note{Kind: "truncated", Detail: detail})
	}
	if len(page.Redirects) > 0 {
		notes = append(notes, sdk.Note{Kind: "redirected", Detail: page.URL})
	}
	return &sdk.Result{Text: b.String(), Data: page, Notes: notes}, nil
}

// viaProxy is base sending every request through the proxy at addr
// (loopback hosts too), a refused tunnel's reason kept for the model.
func viaProxy(base http.RoundTripper, addr string) (http.RoundTripper, error) {
	t, ok := base.(*http.Transport)
	if !ok {
		return nil, sdk.Errorf(sdk.CodeToolFailed, "web_fetch cannot send its requests through the session's proxy with this transport (%T)", base)
	}
	t = t.Clone()
	t.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: addr})
	t.OnProxyConnectResponse = func(_ context.Context, _ *url.URL, _ *http.Request, res *http.Response) error {
		if res.StatusCode == http.StatusOK {
			return nil
		}
		body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		text := strings.TrimSpace(string(body))
		if text == "" {
			text = "the session's proxy refused the connection: " + res.Status
		}
		return &proxyRefusal{text: text}
	}
	return t, nil
}

// proxyRefusal is the session's proxy's refusal of an https:// tunnel, in
// its own words (a plain http:// request's refusal is the 403 page itself).
type proxyRefusal struct{ text string }

func (r *proxyRefusal) Error() string { return r.text }

func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + " …"
}

func isRuneStart(c byte) bool { return c&0xC0 != 0x80 }

// fetchClock is the clock of web_fetch's progress: tests replace it.
var fetchClock clock.Clock = clock.Real{}

// fetchEvery is how often at most web_fetch reports the download;
// fetchBeat how often it says it still waits for an answer.
const (
	fetchEvery = 250 * time.Millisecond
	fetchBeat  = time.Second
)

// fetchProgress tells the call's client what web_fetch waits for: the
// connection, then the body as it comes, then the conversion of HTML.
// Progress counts bytes, grown by one where a step adds none, since MCP
// wants it to grow with each notification.
type fetchProgress struct {
	ctx context.Context
	now func() time.Time

	mu       sync.Mutex
	last     time.Time
	progress float64
	reported bool
}

// report sends message unless throttled (a download step within
// fetchEvery of the last report).
func (p *fetchProgress) report(message string, progress, total float64, throttled bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if throttled && p.reported && now.Sub(p.last) < fetchEvery {
		return
	}
	if p.reported && progress <= p.progress {
		progress = p.progress + 1
	}
	p.last, p.progress, p.reported = now, progress, true
	sdk.ReportProgress(p.ctx, message, progress, total)
}

// progressTransport reports each request web_fetch sends and the body of
// each answer it reads.
type progressTransport struct {
	base http.RoundTripper
	p    *fetchProgress
}

func (t *progressTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	stop := t.p.waiting(req.URL.Host)
	resp, err := t.base.RoundTrip(req)
	stop()
	if err != nil || (resp.StatusCode >= 300 && resp.StatusCode < 400) {
		return resp, err // a redirect's body is not what the client waits for
	}
	resp.Body = &progressBody{ReadCloser: resp.Body, p: t.p, status: resp.StatusCode, length: resp.ContentLength,
		html: strings.Contains(resp.Header.Get("Content-Type"), "html")}
	return resp, nil
}

// waiting reports the connection to host, then every fetchBeat how long
// the answer has been awaited, until stop, which returns once nothing more
// is reported.
func (p *fetchProgress) waiting(host string) (stop func()) {
	p.report("connecting to "+host, 0, 0, false)
	start := p.now()
	return clock.Every(fetchClock, fetchBeat, func(now time.Time) {
		waited := strings.TrimSuffix(fmt.Sprintf("%.1f", now.Sub(start).Seconds()), ".0")
		p.report(fmt.Sprintf("waiting for %s to answer (%s s)", host, waited), 0, 0, false)
	})
}

// progressBody reports the bytes read of an answer's body; it is read by
// one goroutine, the call's.
type progressBody struct {
	io.ReadCloser
	p      *fetchProgress
	status int
	length int64 // -1 when unknown
	html   bool
	read   int64
	ended  bool
}

func (b *progressBody) Read(buf []byte) (int, error) {
	n, err := b.ReadCloser.Read(buf)
	first := b.read == 0 // the download starts: a step of its own
	b.read += int64(n)
	total := float64(max(b.length, 0))
	if n > 0 {
		msg := fmt.Sprintf("HTTP %d, %s", b.status, sizeText(b.read))
		if b.length >= 0 {
			msg += " of " + sizeText(b.length)
		}
		b.p.report(msg, float64(b.read), total, !first)
	}
	if err == io.EOF && !b.ended && b.html {
		b.ended = true
		b.p.report(fmt.Sprintf("HTTP %d, %s read; converting the HTML to Markdown", b.status, sizeText(b.read)), float64(b.read), total, false)
	}
	return n, err
}

// sizeText is like 512 B, 48 KiB, 1.2 MiB.
func sizeText(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}
