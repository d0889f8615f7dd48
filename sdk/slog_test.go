package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// secret is a LogValuer: the handler logs what it resolves to.
type secret string

func (secret) LogValue() slog.Value { return slog.StringValue("redacted") }

// TestSlogHandler: records logged through slog come out of hclog with
// their level, attributes and groups, the level filter applied by hclog's.
func TestSlogHandler(t *testing.T) {
	t.Parallel()
	when := time.Date(2026, 12, 1, 23, 0, 0, 5, time.UTC)
	tests := []struct {
		name string
		log  func(*slog.Logger)
		want []map[string]any // the fields of each line, @timestamp left out
	}{
		{"levels", func(l *slog.Logger) {
			l.Debug("d")
			l.Info("i")
			l.Warn("w")
			l.Error("e")
			l.Log(context.Background(), slog.LevelWarn+2, "between warn and error")
		}, []map[string]any{
			{"@level": "info", "@message": "i"},
			{"@level": "warn", "@message": "w"},
			{"@level": "error", "@message": "e"},
			{"@level": "warn", "@message": "between warn and error"},
		}},
		{"attrs", func(l *slog.Logger) {
			l.Info("m", "n", 7, "s", "x", "ok", true, "err", errors.New("boom"), "at", when, "who", secret("pw"))
		}, []map[string]any{
			{"@level": "info", "@message": "m", "n": 7.0, "s": "x", "ok": true, "err": "boom", "at": "2026-12-01T23:00:00.000000005Z", "who": "redacted"},
		}},
		{"with attrs", func(l *slog.Logger) {
			base := l.With("a", 1)
			_ = base.With("b", 2)
			base.With("c", 3).Info("m", "d", 4)
			base.Info("base")
		}, []map[string]any{
			{"@level": "info", "@message": "m", "a": 1.0, "c": 3.0, "d": 4.0},
			{"@level": "info", "@message": "base", "a": 1.0},
		}},
		{"groups", func(l *slog.Logger) {
			l.WithGroup("g").Info("m", "k", 1)
			l.WithGroup("g").With("a", 1).WithGroup("h").Info("nested", "k", 2)
			l.WithGroup("").Info("no group", "k", 3)
		}, []map[string]any{
			{"@level": "info", "@message": "m", "g.k": 1.0},
			{"@level": "info", "@message": "nested", "g.a": 1.0, "g.h.k": 2.0},
			{"@level": "info", "@message": "no group", "k": 3.0},
		}},
		{"group values", func(l *slog.Logger) {
			l.Info("m", slog.Group("req", "id", 7, slog.Group("peer", "ip", "::1")), slog.Group("", "inline", 1), slog.Attr{}, slog.Group("empty"))
		}, []map[string]any{
			{"@level": "info", "@message": "m", "req.id": 7.0, "req.peer.ip": "::1", "inline": 1.0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			hl := hclog.New(&hclog.LoggerOptions{Name: "host", Output: &buf, Level: hclog.Info, JSONFormat: true})
			tt.log(slog.New(NewSlogHandler(hl)))
			lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
			if buf.Len() == 0 {
				lines = nil
			}
			if len(lines) != len(tt.want) {
				t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(tt.want), buf.String())
			}
			for i, line := range lines {
				var got map[string]any
				if err := json.Unmarshal([]byte(line), &got); err != nil {
					t.Fatalf("line %d is not JSON: %v: %s", i, err, line)
				}
				if _, ok := got["@timestamp"]; !ok {
					t.Errorf("line %d has no @timestamp: %s", i, line)
				}
				delete(got, "@timestamp")
				want := maps.Clone(tt.want[i])
				want["@module"] = "host"
				if !maps.Equal(stringify(got), stringify(want)) {
					t.Errorf("line %d: got %v, want %v", i, got, want)
				}
			}
		})
	}
}

// TestSlogHandler_Enabled: slog asks hclog's level, so a disabled record
// is not even built; trace is below slog's debug.
func TestSlogHandler_Enabled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		at    hclog.Level
		level slog.Level
		want  bool
	}{
		{hclog.Warn, slog.LevelInfo, false},
		{hclog.Warn, slog.LevelWarn, true},
		{hclog.Debug, slog.LevelDebug, true},
		{hclog.Debug, slog.LevelDebug - 4, false},
		{hclog.Trace, slog.LevelDebug - 4, true},
		{hclog.Off, slog.LevelError + 8, false},
	} {
		h := NewSlogHandler(hclog.New(&hclog.LoggerOptions{Output: &bytes.Buffer{}, Level: tt.at}))
		if got := h.Enabled(ctx, tt.level); got != tt.want {
			t.Errorf("Enabled(%v) under hclog %v = %v, want %v", tt.level, tt.at, got, tt.want)
		}
	}
}

func stringify(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		b, _ := json.Marshal(v)
		out[k] = string(b)
	}
	return out
}
