package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTP_PluginWarningsReachTheClients: a plugin's warning reaches, as
// notifications/message, the clients that set a level with
// logging/setLevel; one that names a session reaches that session alone.
func TestHTTP_PluginWarningsReachTheClients(t *testing.T) {
	e := newEnv(t)
	if out, err := e.cli("plugins", "pin", "probe"); err != nil {
		t.Fatalf("pin probe: %v\n%s", err, out)
	}
	h := e.serveHTTP(e2eToken)
	type got struct {
		logger, text string
	}
	connect := func() (*mcp.ClientSession, chan got) {
		ch := make(chan got, 8)
		cs := h.connectWith(t, &mcp.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
				data, _ := r.Params.Data.(map[string]any)
				text, _ := data["text"].(string)
				if data["message"] == "probe warning" && r.Params.Level == "warning" {
					ch <- got{r.Params.Logger, text}
				}
			},
		}, "")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
			t.Fatalf("logging/setLevel: %v", err)
		}
		return cs, ch
	}
	a, fromA := connect()
	_, fromB := connect()
	next := func(ch chan got, who string) got {
		t.Helper()
		select {
		case g := <-ch:
			return g
		case <-time.After(20 * time.Second):
			t.Fatalf("no notifications/message reached %s within 20s", who)
			return got{}
		}
	}

	if r := callHTTP(t, a, "probe_warn", map[string]any{"text": "for A", "name_session": true}); r.IsError {
		t.Fatalf("probe_warn: %s", text(r))
	}
	if g := next(fromA, "session A"); g != (got{"probe", "for A"}) {
		t.Errorf("session A got %+v, want probe's warning \"for A\"", g)
	}
	// The front sends records in order: B's first is the one for everyone
	// unless A's reached it too.
	if r := callHTTP(t, a, "probe_warn", map[string]any{"text": "for all"}); r.IsError {
		t.Fatalf("probe_warn: %s", text(r))
	}
	if g := next(fromB, "session B"); g.text != "for all" {
		t.Errorf("session B's first record is %+v; want \"for all\": a warning naming session A reached B", g)
	}
	if g := next(fromA, "session A"); g.text != "for all" {
		t.Errorf("session A's second record is %+v, want \"for all\"", g)
	}
}
