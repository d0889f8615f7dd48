package app

import (
	"fmt"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/yagent/yagent/call/bus"
)

// logSink publishes the records of the plugin manager's log — the plugins'
// own lines among them — as Log events on the bus, where the MCP front
// passes them on as notifications/message. It sees what the host's log
// level lets through (--log-level; the plugins log at the same level).
type logSink struct{ bus *bus.Dispatcher }

func (s logSink) Accept(name string, level hclog.Level, msg string, args ...any) {
	mcpLevel, ok := mcpLevels[level]
	if !ok {
		return
	}
	fields := make(map[string]any, len(args)/2)
	for i := 0; i+1 < len(args); i += 2 {
		k := fmt.Sprint(args[i])
		if k == "timestamp" || k == "@module" {
			continue
		}
		fields[k] = logValue(args[i+1])
	}
	s.bus.Publish(bus.Event{Type: bus.Log, Payload: bus.LogRecord{Level: mcpLevel, Logger: loggerName(name), Message: msg, Fields: fields}})
}

// mcpLevels maps hclog's levels onto MCP's; trace is not passed on.
var mcpLevels = map[hclog.Level]string{
	hclog.Debug: "debug",
	hclog.Info:  "info",
	hclog.Warn:  "warning",
	hclog.Error: "error",
}

// loggerName names who wrote a record: a plugin's lines come under
// "yagent.<name>", the plugin name alone is enough; the host's own are
// "yagent".
func loggerName(name string) string {
	if plugin, ok := strings.CutPrefix(name, "yagent."); ok {
		return plugin
	}
	return name
}

// logValue keeps a value that encodes as JSON as it is and turns others
// (errors above all) into their text.
func logValue(v any) any {
	switch v := v.(type) {
	case nil, string, bool, int, int32, int64, uint32, uint64, float32, float64:
		return v
	case error:
		return v.Error()
	default:
		return fmt.Sprint(v)
	}
}
