package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// The default limits; they are variables so that a test can lower them
// (tests that run in parallel pass Options instead).
var (
	// DefaultMaxBytes caps the bytes read from a response body.
	DefaultMaxBytes int64 = 5 << 20
	// DefaultTimeout bounds a whole fetch, redirects and body included.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxRedirects is how many redirects a fetch follows.
	DefaultMaxRedirects = 5
)

// Options tunes Fetch; zero fields take the defaults above.
type Options struct {
	MaxBytes     int64
	Timeout      time.Duration
	MaxRedirects int
	// Transport sends the requests; nil means a clone of
	// http.DefaultTransport.
	Transport http.RoundTripper
	// UserAgent is sent with every request.
	UserAgent string
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.UserAgent == "" {
		o.UserAgent = "yagent-web-fetch/0.1 (+https://github.com/yagent/yagent)"
	}
	return o
}

// Page is a fetched page.
type Page struct {
	// URL is the final URL, after redirects.
	URL string `json:"url"`
	// Redirects lists the URLs that redirected, in order.
	Redirects []string `json:"redirects,omitempty"`
	Status    int      `json:"status"`
	// ContentType is the media type, without parameters.
	ContentType string `json:"content_type"`
	Title       string `json:"title,omitempty"`
	// Content is Markdown for HTML, the text itself otherwise.
	Content string `json:"-"`
	// Bytes is how many body bytes were read.
	Bytes int64 `json:"bytes"`
	// Truncated is set when the body was longer than the cap.
	Truncated bool `json:"truncated"`
	// Markdown is set when Content was converted from HTML.
	Markdown bool `json:"markdown"`
}

// Errors a caller tells apart.
var (
	ErrScheme    = errors.New("only http and https URLs can be fetched")
	ErrRedirects = errors.New("too many redirects")
	ErrNotText   = errors.New("the content is not text")
	ErrTimeout   = errors.New("the fetch timed out")
)

// OtherHostError is a redirect to another host, which Fetch does not
// follow: access to that host is for the caller's guard to decide.
type OtherHostError struct {
	From, To string
}

func (e *OtherHostError) Error() string {
	return fmt.Sprintf("%s redirects to another host: %s", e.From, e.To)
}

// StatusError is an HTTP error status; Page holds what the server sent.
type StatusError struct {
	Page *Page
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s answered %d %s", e.Page.URL, e.Page.Status, http.StatusText(e.Page.Status))
}

// CheckURL parses raw, as the host sent it (normalized and judged: it is
// not trimmed or completed again), and refuses anything but an absolute
// http(s) URL.
func CheckURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return nil, fmt.Errorf("%q has no scheme; write it as https://%s: %w", raw, strings.TrimPrefix(raw, "//"), ErrScheme)
	default:
		return nil, fmt.Errorf("%q uses %s: %w", raw, u.Scheme, ErrScheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q has no host: %w", raw, ErrScheme)
	}
	return u, nil
}

// Fetch gets raw with GET, following redirects within the limits, and
// returns the page. An HTTP error status is a *StatusError carrying the
// page.
func Fetch(ctx context.Context, raw string, opts Options) (*Page, error) {
	opts = opts.withDefaults()
	u, err := CheckURL(raw)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()

	page := &Page{}
	transport := opts.Transport
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	client := &http.Client{
		Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > opts.MaxRedirects {
				return fmt.Errorf("stopped after %d redirects at %s: %w", opts.MaxRedirects, req.URL, ErrRedirects)
			}
			if s := strings.ToLower(req.URL.Scheme); s != "http" && s != "https" {
				return fmt.Errorf("a redirect to %s was refused: %w", req.URL, ErrScheme)
			}
			if from := via[0].URL; !strings.EqualFold(req.URL.Hostname(), from.Hostname()) {
				// The host's guard approved the first host only: the
				// caller fetches the new one itself, through the guard.
				return &OtherHostError{From: via[len(via)-1].URL.String(), To: req.URL.String()}
			}
			page.Redirects = append(page.Redirects, via[len(via)-1].URL.String())
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("fetch: %w", err)
	}
	req.Header.Set("User-Agent", opts.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		return nil, classify(ctx, err, opts.Timeout)
	}
	defer resp.Body.Close()
	page.URL = resp.Request.URL.String()
	page.Status = resp.StatusCode

	body, err := io.ReadAll(io.LimitReader(resp.Body, opts.MaxBytes+1))
	if err != nil {
		return nil, classify(ctx, err, opts.Timeout)
	}
	if int64(len(body)) > opts.MaxBytes {
		body, page.Truncated = body[:opts.MaxBytes], true
	}
	page.Bytes = int64(len(body))

	mediaType, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mediaType == "" {
		mediaType, params, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	page.ContentType = mediaType
	if err := page.render(ctx, body, mediaType, params["charset"]); err != nil {
		return nil, err
	}
	if resp.StatusCode >= 400 {
		return page, &StatusError{Page: page}
	}
	return page, nil
}

// classify names a timeout as such.
func classify(ctx context.Context, err error, timeout time.Duration) error {
	var other *OtherHostError
	if errors.As(err, &other) {
		return other
	}
	if errors.Is(err, ErrScheme) || errors.Is(err, ErrRedirects) {
		return errors.Unwrap(err)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no complete answer within %s: %w", timeout, ErrTimeout)
	}
	return fmt.Errorf("fetch: %w", err)
}

func (p *Page) render(ctx context.Context, body []byte, mediaType, cs string) error {
	isHTML := mediaType == "text/html" || mediaType == "application/xhtml+xml"
	if !isHTML && !isText(mediaType) {
		if utf8.Valid(body) && !bytes.ContainsRune(body, 0) && len(body) > 0 {
			p.Content = string(body)
			return nil
		}
		return fmt.Errorf("%s is %s: %w", p.URL, mediaType, ErrNotText)
	}
	text, err := toUTF8(body, mediaType, cs)
	if err != nil {
		return fmt.Errorf("%s: %w", p.URL, err)
	}
	if !isHTML {
		p.Content = text
		return nil
	}
	doc, err := html.Parse(strings.NewReader(text))
	if err != nil {
		return fmt.Errorf("%s: parse html: %w", p.URL, err)
	}
	p.Title = title(doc)
	md, err := converter().ConvertNode(doc, htmltomarkdown.WithDomain(p.URL), htmltomarkdown.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("%s: html to markdown: %w", p.URL, err)
	}
	p.Content, p.Markdown = strings.TrimSpace(string(md)), true
	return nil
}

func isText(mediaType string) bool {
	if strings.HasPrefix(mediaType, "text/") {
		return true
	}
	switch mediaType {
	case "application/json", "application/xml", "application/javascript", "application/x-javascript",
		"application/ld+json", "application/x-yaml", "application/yaml", "application/toml", "image/svg+xml":
		return true
	}
	return strings.HasSuffix(mediaType, "+json") || strings.HasSuffix(mediaType, "+xml")
}

// toUTF8 decodes body from its declared or sniffed charset.
func toUTF8(body []byte, mediaType, cs string) (string, error) {
	ct := mediaType
	if cs != "" {
		ct += "; charset=" + cs
	}
	r, err := charset.NewReader(bytes.NewReader(body), ct)
	if err != nil {
		return strings.ToValidUTF8(string(body), "\uFFFD"), nil
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("decode %s: %w", ct, err)
	}
	return strings.ToValidUTF8(string(out), "\uFFFD"), nil
}

// title returns the text of the document's <title>.
func title(n *html.Node) string {
	if n.Type == html.ElementNode && n.Data == "title" {
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		return strings.Join(strings.Fields(b.String()), " ")
	}
	if n.Type == html.ElementNode && n.Data == "body" {
		return ""
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := title(c); t != "" {
			return t
		}
	}
	return ""
}

// converter returns the shared HTML-to-Markdown converter (safe for
// concurrent use): CommonMark with tables and strikethrough.
var converter = sync.OnceValue(func() *htmltomarkdown.Converter {
	return htmltomarkdown.NewConverter(htmltomarkdown.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
		strikethrough.NewStrikethroughPlugin(),
	))
})
