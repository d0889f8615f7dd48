package nav

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/yagent/yagent/plugins/search/internal/grep"
	"github.com/yagent/yagent/sdk/sandbox"
)

// The Go type checker (go/packages) runs go list, which runs cgo and the C
// compiler on a package's preamble: a workspace can make them read any file
// the plugin can (#include "/home/u/.ssh/key"), and the types it then
// describes (an array as long as a number in that file) carry it into the
// result. go/packages starts go from no thread of ours, so the sandbox
// cannot be applied to it in this process: under a sandbox, the search
// plugin's binary is started again, inside the call's sandbox, as the Go
// loader (LoaderArg), and type-checks there.

// LoaderArg is the first argument that starts the search plugin's binary
// as the Go loader: it reads a goQuery on stdin, writes a goAnswer on
// stdout and exits.
const LoaderArg = "--yagent-nav-loader"

// goQuery is what the Go loader is asked.
type goQuery struct {
	Base    string     `json:"base"`
	Roots   []string   `json:"roots,omitempty"`
	Modules []goModule `json:"modules"`
	Ident   string     `json:"ident"`
	Scope   string     `json:"scope,omitempty"`
	// Lines are the word matches of Ident by absolute file: the files to
	// resolve and the text of their lines.
	Lines map[string][]grep.Line `json:"lines"`
	// Timeout bounds each module's load in the loader.
	Timeout time.Duration `json:"timeout"`
	// Callees, when set, asks for the callees of one function instead.
	Callees *calleesQuery `json:"callees,omitempty"`
}

// calleesQuery asks what the function Symbol of the Go file File calls.
type calleesQuery struct {
	File   string `json:"file"`
	Symbol string `json:"symbol"`
}

// goModule is one module to type-check and its packages' patterns.
type goModule struct {
	Dir      string   `json:"dir"`
	Patterns []string `json:"patterns"`
}

// goAnswer is what the Go loader found.
type goAnswer struct {
	Groups     []RefGroup `json:"groups"`
	Done       []string   `json:"done"`
	Unresolved []string   `json:"unresolved"`
	// Callees answers goQuery.Callees.
	Callees *CalleeResult `json:"callees,omitempty"`
}

const (
	// maxQuery and maxAnswer cap what the loader and the plugin read from
	// each other.
	maxQuery  = 64 << 20
	maxAnswer = 64 << 20
	// loaderStderrMax caps the loader's stderr kept for the log.
	loaderStderrMax = 16 << 10
	// loaderGrace is how long after its bound a loader's output may take
	// to drain before its pipes are closed.
	loaderGrace = 2 * time.Second
)

// ServeLoader is the Go loader's main: it answers the query on stdin and
// returns the exit code.
func ServeLoader(stdin io.Reader, stdout, stderr io.Writer) int {
	var q goQuery
	if err := json.NewDecoder(io.LimitReader(stdin, maxQuery)).Decode(&q); err != nil {
		fmt.Fprintf(stderr, "go loader: read the query: %v\n", err)
		return 2
	}
	f := &Finder{Base: q.Base, Roots: q.Roots, LoadTimeout: q.Timeout}
	var a *goAnswer
	if q.Callees != nil {
		res, err := f.callees(context.Background(), q.Callees.File, q.Callees.Symbol, true)
		if err != nil {
			fmt.Fprintf(stderr, "go loader: callees: %v\n", err)
			return 2
		}
		a = &goAnswer{Callees: res}
	} else {
		a = f.check(context.Background(), &q)
	}
	if err := json.NewEncoder(stdout).Encode(a); err != nil {
		fmt.Fprintf(stderr, "go loader: write the answer: %v\n", err)
		return 2
	}
	return 0
}

// inLoader reports whether ctx's call type-checks in the Go loader: it has
// a sandbox, and the sandbox has layers here (elsewhere a child would be
// confined no more than this process).
func inLoader(ctx context.Context) bool {
	_, _, ok := sandbox.ForCall(ctx, nil)
	return ok && loaderConfines
}

// loadTimeout is the Finder's bound on type-checking.
func (f *Finder) loadTimeout() time.Duration {
	if f.LoadTimeout > 0 {
		return f.LoadTimeout
	}
	return LoadTimeout
}

// checkInChild runs check in the Go loader (see runLoader), with only the
// Go files' lines.
func (f *Finder) checkInChild(ctx context.Context, q *goQuery) (*goAnswer, error) {
	cq := *q
	cq.Lines = make(map[string][]grep.Line, len(q.Lines))
	for file, lines := range q.Lines {
		if strings.HasSuffix(file, ".go") {
			cq.Lines[file] = lines
		}
	}
	a, err := f.runLoader(ctx, &cq)
	if err != nil {
		return nil, err
	}
	if a.Groups == nil {
		a.Groups = []RefGroup{}
	}
	return a, nil
}

// runLoader answers q in the Go loader, started inside the call's sandbox
// in a process group of its own, killed whole when the call ends, when the
// bound passes, and once it has answered (so nothing go list started
// outlives the call).
func (f *Finder) runLoader(ctx context.Context, q *goQuery) (*goAnswer, error) {
	bin := f.Loader
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("the Go type checker cannot start: %w", err)
		}
		bin = exe
	}
	cq := *q
	timeout := f.loadTimeout()
	cq.Timeout = timeout
	body, err := json.Marshal(&cq)
	if err != nil {
		return nil, fmt.Errorf("the Go type checker's query: %w", err)
	}

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, LoaderArg)
	cmd.Env = f.LoaderEnv
	cmd.Stdin = bytes.NewReader(body)
	stdout := &capped{max: maxAnswer}
	stderr := &capped{max: loaderStderrMax}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	ownGroup(cmd)
	cmd.WaitDelay = loaderGrace
	// Its own binary may be run wherever the plugin is installed (a
	// plugin folder in the private part of the home).
	if err := sandbox.StartForCall(ctx, cmd, bin); err != nil {
		return nil, fmt.Errorf("the Go type checker did not start: %w", err)
	}
	werr := cmd.Wait()
	killGroup(cmd.Process.Pid)
	if stderr.Len() > 0 {
		log.Printf("search: go loader (pid %d) stderr: %s", cmd.Process.Pid, strings.TrimSpace(stderr.String()))
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("the Go type checker did not finish within %s", timeout)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("the Go type checker was stopped: %w", ctx.Err())
	case werr != nil:
		return nil, fmt.Errorf("the Go type checker failed: %w", werr)
	case stdout.over:
		return nil, fmt.Errorf("the Go type checker's answer is over %d bytes", maxAnswer)
	}
	var a goAnswer
	if err := json.Unmarshal(stdout.Bytes(), &a); err != nil {
		return nil, fmt.Errorf("the Go type checker's answer does not parse: %w", err)
	}
	return &a, nil
}

// capped keeps the first max bytes written to it and notes the overflow.
type capped struct {
	max  int
	over bool
	bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room > 0 {
		if len(p) > room {
			c.over = true
			c.Buffer.Write(p[:room])
		} else {
			c.Buffer.Write(p)
		}
	} else if len(p) > 0 {
		c.over = true
	}
	return len(p), nil
}
