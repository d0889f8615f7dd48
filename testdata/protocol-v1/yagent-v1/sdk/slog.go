package sdk

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"
)

// NewSlogHandler returns an slog.Handler that writes every record through
// l, so code logging with log/slog and code logging with hclog share one
// format, one level and one output. hclog has no slog bridge of its own.
//
// Levels map onto hclog's (below slog.LevelDebug is trace); attributes
// keep their keys, and a group's attributes are named group.key, as
// WithGroup and group values nest them. Serve makes it the handler of
// slog's default logger, so a plugin's slog and log.Print lines reach the
// host as its hclog lines do; the host routes its own slog users through
// it too.
func NewSlogHandler(l hclog.Logger) slog.Handler { return &slogHandler{log: l} }

type slogHandler struct {
	log hclog.Logger
	// args are the key/value pairs of WithAttrs, keys already qualified by
	// the groups open at the time.
	args []any
	// prefix is the groups open now, each followed by a dot.
	prefix string
}

func (h *slogHandler) Enabled(_ context.Context, l slog.Level) bool {
	return h.log.GetLevel() <= hclogLevel(l)
}

func (h *slogHandler) Handle(_ context.Context, r slog.Record) error {
	args := slices.Clip(h.args)
	r.Attrs(func(a slog.Attr) bool {
		args = appendAttr(args, h.prefix, a)
		return true
	})
	h.log.Log(hclogLevel(r.Level), r.Message, args...)
	return nil
}

func (h *slogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	h2 := *h
	h2.args = slices.Clip(h.args)
	for _, a := range attrs {
		h2.args = appendAttr(h2.args, h.prefix, a)
	}
	return &h2
}

func (h *slogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.prefix = h.prefix + name + "."
	return &h2
}

// appendAttr appends a as hclog key/value pairs: a group flattened into
// prefix.group.key pairs (one with no key inlined), an empty attribute
// dropped, as slog's own handlers do.
func appendAttr(args []any, prefix string, a slog.Attr) []any {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return args
	}
	if a.Value.Kind() == slog.KindGroup {
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			args = appendAttr(args, prefix, g)
		}
		return args
	}
	return append(args, prefix+a.Key, attrValue(a.Value))
}

// attrValue is what hclog writes for v: the Go value, but a time as
// RFC 3339 text (its String has the monotonic clock reading).
func attrValue(v slog.Value) any {
	if v.Kind() == slog.KindTime {
		return v.Time().Format(time.RFC3339Nano)
	}
	return v.Any()
}

func hclogLevel(l slog.Level) hclog.Level {
	switch {
	case l < slog.LevelDebug:
		return hclog.Trace
	case l < slog.LevelInfo:
		return hclog.Debug
	case l < slog.LevelWarn:
		return hclog.Info
	case l < slog.LevelError:
		return hclog.Warn
	}
	return hclog.Error
}
