package proctest

import (
	"bufio"
	"io"
	"regexp"
)

// servingLine is the line `yagent serve --http` prints once it listens.
var servingLine = regexp.MustCompile(`serving MCP over HTTP at (https?://\S+/mcp)`)

// ServingURL reads the stderr of a `yagent serve --http` from r and sends
// the URL its serving line names, once; it reads r to its end either way,
// so the process never blocks on a full pipe.
func ServingURL(r io.Reader) <-chan string {
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, r)
	}()
	return found
}
