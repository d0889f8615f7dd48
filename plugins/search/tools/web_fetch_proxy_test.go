package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yagent/yagent/plugins/search/internal/fetch"
	"github.com/yagent/yagent/sdk"
)

// TestWebFetch_ThroughTheSessionsProxy: under sandbox.network: proxy
// web_fetch sends its request through the session's proxy, a loopback
// URL included; a refused tunnel comes back as the proxy's own words; with
// no proxy to use nothing is sent.
func TestWebFetch_ThroughTheSessionsProxy(t *testing.T) {
	t.Parallel()
	direct := fetchServer(t)
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.RequestURI)
		mu.Unlock()
		if r.Method == http.MethodConnect {
			http.Error(w, "yagent refused blocked.example:443: not on the list", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "answered by the proxy")
	}))
	t.Cleanup(proxy.Close)
	tool := WebFetch(Config{Fetch: &fetch.Options{Timeout: 5 * time.Second}})
	run := func(sb *sdk.Sandbox, url string) (*sdk.Result, error) {
		raw, _ := json.Marshal(webFetchInput{URL: url})
		ctx := sdk.WithCall(context.Background(), sdk.CallInfo{ID: "c1", Tool: "web_fetch", Workspace: t.TempDir(), Sandbox: sb})
		return tool.Call(ctx, raw)
	}
	sb := &sdk.Sandbox{Mode: sdk.SandboxOn, Network: sdk.NetworkProxy, Egress: &sdk.Egress{Proxy: strings.TrimPrefix(proxy.URL, "http://")}}

	res, err := run(sb, direct.URL+"/plain")
	if err != nil || !strings.Contains(res.Text, "answered by the proxy") {
		t.Fatalf("web_fetch of a loopback URL under proxy: %v %v, want the proxy's answer", res, err)
	}
	_, err = run(sb, "https://blocked.example/")
	if te := wantToolError(t, err, sdk.CodeDenied); !strings.Contains(te.Message, "yagent refused blocked.example:443: not on the list") {
		t.Errorf("a refused tunnel: %q, want the proxy's words", te.Message)
	}
	mu.Lock()
	want := []string{"GET " + direct.URL + "/plain", "CONNECT blocked.example:443"}
	if len(seen) != 2 || seen[0] != want[0] || seen[1] != want[1] {
		t.Errorf("the proxy saw %q, want %q", seen, want)
	}
	mu.Unlock()

	_, err = run(&sdk.Sandbox{Mode: sdk.SandboxOn, Network: sdk.NetworkProxy}, direct.URL+"/plain")
	wantToolError(t, err, sdk.CodeNoProxy)
	res, err = run(&sdk.Sandbox{Mode: sdk.SandboxOn, Network: sdk.NetworkOn}, direct.URL+"/plain")
	if err != nil || !strings.Contains(res.Text, "just text") {
		t.Errorf("web_fetch under network on: %v %v, want the server's page", res, err)
	}
}
