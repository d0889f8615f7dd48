package app

import (
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/yagent/yagent/sdk"
)

// LogFormats are the formats Options.LogFormat takes: hclog's text lines
// or one JSON object a line.
var LogFormats = []string{"text", "json"}

// hostLoggers are the host's loggers: one hclog configuration (output,
// level, format, lock), so every line on the log has one format.
type hostLoggers struct {
	// slog is what the host's packages log with, routed into hclog.
	slog *slog.Logger
	// plugins is the plugin manager's logger, the plugins' own lines among
	// its records; it is the one whose records also reach MCP clients
	// (logSink), as the host's own lines do not.
	plugins hclog.InterceptLogger
}

// newLoggers builds the host's loggers writing to out ("" level = warn,
// "" format = text).
func newLoggers(out io.Writer, level, format string) (hostLoggers, error) {
	if out == nil {
		out = io.Discard
	}
	if level == "" {
		level = "warn"
	}
	var json bool
	switch format {
	case "", "text":
	case "json":
		json = true
	default:
		return hostLoggers{}, fmt.Errorf("log format %q: give text or json", format)
	}
	opts := &hclog.LoggerOptions{
		Name:       "yagent",
		Output:     out,
		Level:      hclog.LevelFromString(level),
		JSONFormat: json,
		// One lock for both: their lines never interleave.
		Mutex: &sync.Mutex{},
	}
	return hostLoggers{
		slog:    slog.New(sdk.NewSlogHandler(hclog.New(opts))),
		plugins: hclog.NewInterceptLogger(opts),
	}, nil
}
