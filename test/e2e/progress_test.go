package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressLog records the notifications/progress a client receives.
type progressLog struct {
	mu   sync.Mutex
	seen []*mcp.ProgressNotificationParams
}

func (l *progressLog) handler(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, r.Params)
}

// of returns the notifications of progress token tok, in order.
func (l *progressLog) of(tok string) []*mcp.ProgressNotificationParams {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*mcp.ProgressNotificationParams
	for _, p := range l.seen {
		if p.ProgressToken == tok {
			out = append(out, p)
		}
	}
	return out
}

// connectStdio starts `yagent serve` (stdio) with a client whose progress
// notifications go to log.
func (e *env) connectStdio(log *progressLog) *mcp.ClientSession {
	e.t.Helper()
	cmd := exec.Command(yagent, append([]string{"serve"}, e.args()...)...)
	cmd.Env = e.environ()
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	mc := mcp.NewClient(&mcp.Implementation{Name: "e2e-progress", Version: "0"}, &mcp.ClientOptions{ProgressNotificationHandler: log.handler})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mc.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		e.t.Fatalf("connect to yagent serve: %v\nstderr:\n%s", err, stderr.String())
	}
	e.t.Cleanup(func() {
		_ = cs.Close()
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	})
	return cs
}

// fiveLines runs 2 s and prints five lines.
const fiveLines = "for i in 1 2 3 4 5; do echo line $i; sleep 0.4; done"

var progressLine = regexp.MustCompile(`^([1-5]) lines?, \d+\.\ds: line ([1-5])$`)

// TestProgress_RunBashReportsItsLines: a run_bash of 2 s printing five
// lines, called with a progress token, sends at least three
// notifications/progress naming the lines so far, their progress strictly
// growing, all before the result; over stdio and over HTTP alike.
func TestProgress_RunBashReportsItsLines(t *testing.T) {
	fronts := map[string]func(e *env, log *progressLog) *mcp.ClientSession{
		"stdio": func(e *env, log *progressLog) *mcp.ClientSession { return e.connectStdio(log) },
		"http": func(e *env, log *progressLog) *mcp.ClientSession {
			return e.serveHTTP(e2eToken).connectWith(t, &mcp.ClientOptions{ProgressNotificationHandler: log.handler}, "")
		},
	}
	for name, connect := range fronts {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			log := &progressLog{}
			cs := connect(e, log)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			p := &mcp.CallToolParams{Name: "run_bash", Arguments: map[string]any{"command": fiveLines}}
			tok := "progress-" + name
			p.SetProgressToken(tok)
			res, err := cs.CallTool(ctx, p)
			got := log.of(tok) // what came before the result
			if err != nil || res.IsError {
				t.Fatalf("run_bash: %v %v", err, res)
			}
			if !strings.Contains(text(res), "line 5") {
				t.Fatalf("run_bash result %q, want the five lines", text(res))
			}
			checkLineProgress(t, got)
			// A call after it: nothing more of the first call comes.
			if r := callHTTP(t, cs, "run_bash", map[string]any{"command": "true"}); r.IsError {
				t.Fatalf("run_bash true: %s", text(r))
			}
			if late := log.of(tok); len(late) != len(got) {
				t.Errorf("%d notifications after the result: %s", len(late)-len(got), describe(late[len(got):]))
			}
		})
	}
}

// checkLineProgress: at least 3 notifications, each naming the lines so far
// and the last one, their progress strictly growing.
func checkLineProgress(t *testing.T, got []*mcp.ProgressNotificationParams) {
	t.Helper()
	t.Logf("notifications before the result:%s", describe(got))
	if len(got) < 3 {
		t.Errorf("%d notifications/progress before the result, want at least 3", len(got))
	}
	for i, n := range got {
		m := progressLine.FindStringSubmatch(n.Message)
		if m == nil || m[1] != m[2] {
			t.Errorf("notification %d says %q, want like \"3 lines, 1.2s: line 3\"", i, n.Message)
		}
		if i > 0 && n.Progress <= got[i-1].Progress {
			t.Errorf("notification %d has progress %v after %v: it must grow", i, n.Progress, got[i-1].Progress)
		}
	}
}

// TestProgress_TypeScriptClient: the MCP TypeScript SDK's Streamable HTTP
// client, calling run_bash with a progress callback, gets the same
// notifications before the result.
func TestProgress_TypeScriptClient(t *testing.T) {
	node, sdkDir := needTSClient(t)
	e := newEnv(t)
	h := e.serveHTTP(e2eToken)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, filepath.Join(repoRoot, "test", "e2e", "testdata", "progress_client.mjs"), sdkDir, h.url, e2eToken, fiveLines).CombinedOutput()
	if err != nil {
		t.Fatalf("node progress_client.mjs: %v\n%s\nserve stderr:\n%s", err, out, h.stderr.String())
	}
	var got struct {
		Before []struct {
			Progress, Total float64
			Message         string
		}
		After int
		Text  string
	}
	if err := json.Unmarshal(out[bytes.LastIndexByte(bytes.TrimSpace(out), '\n')+1:], &got); err != nil {
		t.Fatalf("decode the client's report %q: %v", out, err)
	}
	if !strings.Contains(got.Text, "line 5") {
		t.Fatalf("run_bash result %q, want the five lines", got.Text)
	}
	var ps []*mcp.ProgressNotificationParams
	for _, b := range got.Before {
		ps = append(ps, &mcp.ProgressNotificationParams{Progress: b.Progress, Total: b.Total, Message: b.Message})
	}
	checkLineProgress(t, ps)
	if got.After != 0 {
		t.Errorf("%d notifications after the result", got.After)
	}
}

func describe(ps []*mcp.ProgressNotificationParams) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("\n  ")
		b.WriteString(strconv.FormatFloat(p.Progress, 'g', -1, 64))
		b.WriteString(" ")
		b.WriteString(p.Message)
	}
	return b.String()
}
