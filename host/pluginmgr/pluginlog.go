package pluginmgr

import (
	"strings"

	"github.com/hashicorp/go-hclog"
)

// pluginLogger is the go-plugin client's logger for plugin name: its
// lines, and the plugin's own, are named by the plugin (yagent.fs), not by
// its binary. go-plugin logs a plugin's stderr through
// Named(<base name of the binary>); that name is the one replaced.
type pluginLogger struct {
	hclog.Logger        // named by the plugin
	name, binary string // the plugin's name; the base name of its binary
}

func newPluginLogger(parent hclog.Logger, name, binary string) pluginLogger {
	return pluginLogger{Logger: parent.Named(name), name: name, binary: binary}
}

func (l pluginLogger) Named(name string) hclog.Logger {
	if name == l.binary {
		return stderrLogger{Logger: l.Logger, name: l.name}
	}
	return l.Logger.Named(name)
}

// stderrLogger re-emits the plugin's hclog lines, which go-plugin has
// parsed from its JSON, in the host's format. It drops what would say a
// line's origin twice: the plugin's own @module (the logger's name says it;
// a sub-logger's suffix is kept in the name) and its timestamp (the host
// stamps the line).
type stderrLogger struct {
	hclog.Logger
	name string
}

func (l stderrLogger) Log(level hclog.Level, msg string, args ...any) {
	logger := l.Logger
	kept := make([]any, 0, len(args))
	for i := 0; i < len(args); i += 2 {
		if i+1 == len(args) {
			kept = append(kept, args[i])
			break
		}
		switch args[i] {
		case "timestamp":
			continue
		case "@module":
			if m, ok := args[i+1].(string); ok {
				if sub, ok := strings.CutPrefix(m, l.name+"."); ok {
					logger = logger.Named(sub)
				}
			}
			continue
		}
		kept = append(kept, args[i], args[i+1])
	}
	logger.Log(level, msg, kept...)
}

func (l stderrLogger) Trace(msg string, args ...any) { l.Log(hclog.Trace, msg, args...) }
func (l stderrLogger) Debug(msg string, args ...any) { l.Log(hclog.Debug, msg, args...) }
func (l stderrLogger) Info(msg string, args ...any)  { l.Log(hclog.Info, msg, args...) }
func (l stderrLogger) Warn(msg string, args ...any)  { l.Log(hclog.Warn, msg, args...) }
func (l stderrLogger) Error(msg string, args ...any) { l.Log(hclog.Error, msg, args...) }
