package nav

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/yagent/yagent/sdk/sandbox"
	"os/exec"
	"path/filepath"
	"strings"
)

// ctagsTag is one line of ctags' JSON output.
type ctagsTag struct {
	Type      string `json:"_type"`
	Name      string `json:"name"`
	Path      string `json:"path"`
	Line      int    `json:"line"`
	End       int    `json:"end"`
	Kind      string `json:"kind"`
	Scope     string `json:"scope"`
	ScopeKind string `json:"scopeKind"`
	Signature string `json:"signature"`
	Language  string `json:"language"`
}

// Ctags runs Universal Ctags on files (absolute paths) and returns their
// definitions by absolute path; shown maps a path to how it is displayed.
func Ctags(ctx context.Context, bin string, files []string, shown func(string) string) (map[string][]Symbol, error) {
	out := map[string][]Symbol{}
	if len(files) == 0 {
		return out, nil
	}
	cmd := exec.CommandContext(ctx, bin, "--output-format=json", "--fields=+nKSel", "--sort=no", "-f", "-", "-L", "-")
	cmd.Stdin = strings.NewReader(strings.Join(files, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var stdoutBuf bytes.Buffer
	cmd.Stdout = &stdoutBuf
	// ctags runs inside the call's sandbox, as a command of the call would.
	err := sandbox.StartForCall(ctx, cmd)
	if err == nil {
		err = cmd.Wait()
	}
	stdout := stdoutBuf.Bytes()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("ctags: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var t ctagsTag
		if json.Unmarshal(sc.Bytes(), &t) != nil || t.Type != "tag" || t.Line == 0 {
			continue
		}
		abs := t.Path
		if !filepath.IsAbs(abs) {
			abs = filepath.Clean(abs)
		}
		out[abs] = append(out[abs], Symbol{
			Name: t.Name, Kind: ctagsKind(t), Path: shown(abs), Line: t.Line, EndLine: t.End,
			Scope: t.Scope, Signature: t.Signature, Source: "ctags",
		})
	}
	for _, ss := range out {
		sortSymbols(ss)
	}
	return out, nil
}

// ctagsKind names a tag's kind; Python methods come as "member" and are
// called "method" here, as the fallback reader calls them.
func ctagsKind(t ctagsTag) string {
	if t.Kind == "member" && t.ScopeKind == "class" {
		return "method"
	}
	return t.Kind
}
