package tools

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yagent/yagent/plugins/search/internal/fetch"
	"github.com/yagent/yagent/sdk"
)

func fetchServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title> The  Page </title><style>p{}</style><script>alert(1)</script></head>
<body><h1>Heading</h1><p>Some <b>bold</b> text and a <a href="/other">link</a>.</p>
<ul><li>one</li><li>two</li></ul></body></html>`)
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		w.Write([]byte("<p>caf\xe9</p>"))
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "just text\n")
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("0123456789", 1000))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		// Holds the answer until the client gives up: no real wait.
		<-r.Context().Done()
	})
	mux.HandleFunc("/png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00"))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<p>no such page</p>")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestWebFetch(t *testing.T) {
	t.Parallel()
	srv := fetchServer(t)
	tool := WebFetch(Config{Fetch: &fetch.Options{Timeout: 5 * time.Second}})
	ws := t.TempDir()

	res := mustCall(t, tool, ws, webFetchInput{URL: srv.URL + "/page"})
	for _, want := range []string{"URL: " + srv.URL + "/page\n", "Title: The Page\n", "# Heading", "Some **bold** text and a [link](" + srv.URL + "/other).", "- one\n- two"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("page: text lacks %q:\n%s", want, res.Text)
		}
	}
	if strings.Contains(res.Text, "alert") || strings.Contains(res.Text, "p{}") {
		t.Errorf("page: script or style leaked into the text:\n%s", res.Text)
	}

	res = mustCall(t, tool, ws, webFetchInput{URL: srv.URL + "/latin1"})
	if !strings.Contains(res.Text, "café") {
		t.Errorf("latin1 page not decoded: %q", res.Text)
	}
	res = mustCall(t, tool, ws, webFetchInput{URL: srv.URL + "/plain"})
	if !strings.HasSuffix(res.Text, "\n\njust text\n\n") || res.Data.(*fetch.Page).Markdown {
		t.Errorf("plain text = %q", res.Text)
	}

	res = mustCall(t, tool, ws, webFetchInput{URL: srv.URL + "/redirect"})
	if !strings.Contains(res.Text, "URL: "+srv.URL+"/page\nRedirected from: "+srv.URL+"/redirect\n") || !strings.Contains(res.Text, "# Heading") {
		t.Errorf("redirect: %q", res.Text)
	}
	if _, ok := noteKinds(res)["redirected"]; !ok {
		t.Errorf("redirect: notes %v", res.Notes)
	}

	res = mustCall(t, tool, ws, webFetchInput{URL: srv.URL + "/big", MaxBytes: 25})
	if !strings.Contains(res.Text, "\n\n0123456789012345678901234\n") || !strings.Contains(res.Text, "cut at 25 bytes") {
		t.Errorf("size cap: %q", res.Text)
	}
	if p := res.Data.(*fetch.Page); !p.Truncated || p.Bytes != 25 {
		t.Errorf("size cap: page %+v", p)
	}

	// The cap stops the read itself, not only what is shown: a server
	// streaming up to 256 MiB gets to write little more than the cap and
	// the socket buffers before the client hangs up.
	var written atomic.Int64
	endlessSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		chunk := []byte(strings.Repeat("x", 64<<10))
		for range (256 << 20) / len(chunk) {
			if _, err := w.Write(chunk); err != nil || r.Context().Err() != nil {
				return
			}
			written.Add(int64(len(chunk)))
		}
	}))
	defer endlessSrv.Close()
	endless, err := call(t, WebFetch(Config{Fetch: &fetch.Options{Timeout: 5 * time.Second, MaxBytes: 1 << 20}}), ws, webFetchInput{URL: endlessSrv.URL})
	if err != nil {
		t.Fatalf("endless body: %v (the read did not stop at the cap)", err)
	}
	if p := endless.Data.(*fetch.Page); !p.Truncated || p.Bytes != 1<<20 {
		t.Errorf("endless body: page %+v", p)
	}
	endlessSrv.CloseClientConnections()
	if n := written.Load(); n > 32<<20 {
		t.Errorf("the server wrote %d bytes: the client read far past its 1 MiB cap", n)
	}
}

func TestWebFetchRefusals(t *testing.T) {
	t.Parallel()
	srv := fetchServer(t)
	// The same server under another host name: localhost, not 127.0.0.1.
	elsewhere := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/page"
	srv.Config.Handler.(*http.ServeMux).HandleFunc("/to-other-host", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere, http.StatusFound)
	})
	tool := WebFetch(Config{Fetch: &fetch.Options{Timeout: 5 * time.Second}})
	ws := t.TempDir()
	tests := []struct {
		url, code, says string
	}{
		{"file:///etc/passwd", sdk.CodeInvalidInput, "only http and https"},
		{"ftp://example.com/x", sdk.CodeInvalidInput, "only http and https"},
		{"example.com/page", sdk.CodeInvalidInput, "no scheme"},
		{srv.URL + "/to-file", sdk.CodeInvalidInput, "redirect to file:///etc/passwd was refused"},
		{srv.URL + "/loop", sdk.CodeToolFailed, "stopped after 5 redirects"},
		{srv.URL + "/png", sdk.CodeInvalidInput, "image/png"},
		{srv.URL + "/missing", "http_error", "404 Not Found"},
		{srv.URL + "/to-other-host", "redirect_other_host", "call web_fetch with url \"" + elsewhere + "\""},
	}
	for _, tt := range tests {
		_, err := call(t, tool, ws, webFetchInput{URL: tt.url})
		te := wantToolError(t, err, tt.code)
		if !strings.Contains(te.Message, tt.says) {
			t.Errorf("web_fetch(%s) = %q, want it to say %q", tt.url, te.Message, tt.says)
		}
	}
}

// The time cap goes through Options (the same seam as fetch.DefaultTimeout):
// a server that never answers is given up on after 50ms.
func TestWebFetchTimeout(t *testing.T) {
	t.Parallel()
	srv := fetchServer(t)
	tool := WebFetch(Config{Fetch: &fetch.Options{Timeout: 50 * time.Millisecond}})
	start := time.Now()
	_, err := call(t, tool, t.TempDir(), webFetchInput{URL: srv.URL + "/slow"})
	te := wantToolError(t, err, sdk.CodeTimeout)
	if !strings.Contains(te.Message, "50ms") {
		t.Errorf("timeout message %q does not name the limit", te.Message)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("timeout took %s", d)
	}
}
