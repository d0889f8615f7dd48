package e2e

import (
	"context"
	"os/exec"
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
			p := &mcp.CallToolParams{Name: "run_bash", Arguments: map[string]any{"command": "for i in 1 2 3 4 5; do echo line $i; sleep 0.4; done"}}
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
			if len(got) < 3 {
				t.Fatalf("%d notifications/progress before the result, want at least 3: %s", len(got), describe(got))
			}
			t.Logf("notifications before the result:%s", describe(got))
			for i, n := range got {
				m := progressLine.FindStringSubmatch(n.Message)
				if m == nil || m[1] != m[2] {
					t.Errorf("notification %d says %q, want like \"3 lines, 1.2s: line 3\"", i, n.Message)
				}
				if i > 0 && n.Progress <= got[i-1].Progress {
					t.Errorf("notification %d has progress %v after %v: it must grow", i, n.Progress, got[i-1].Progress)
				}
			}
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
