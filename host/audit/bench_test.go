package audit_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/yagent/yagent/call/session"
)

// BenchmarkAuditOverhead: the cost of a call through the surface with the
// audit trail on against the same host with it off, calls of the two
// interleaved so the machine's drift hits both alike. It reports each
// side's median call and their ratio.
func BenchmarkAuditOverhead(b *testing.B) {
	on := newHost(b, hostOpts{sandboxOff: true})
	off := newHost(b, hostOpts{sandboxOff: true, config: "audit: off\n"})
	if err := os.WriteFile(filepath.Join(on.ws, "f.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(off.ws, "f.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"think", map[string]any{"thought": "weigh the two plans"}},
		{"read_file", map[string]any{"path": "f.txt"}},
	} {
		b.Run(tc.tool, func(b *testing.B) {
			raw, _ := json.Marshal(tc.args)
			sOn, sOff := session.New(""), session.New("")
			call := func(h *host, s *session.Session) time.Duration {
				start := time.Now()
				res := h.app.Surface.Call(session.NewContext(b.Context(), s), s, tc.tool, raw)
				d := time.Since(start)
				if res.Code != "" {
					b.Fatalf("%s: %s %s", tc.tool, res.Code, res.Text)
				}
				return d
			}
			// Warm both: the plugins start on their first call.
			call(on, sOn)
			call(off, sOff)
			var dOn, dOff []time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					dOn = append(dOn, call(on, sOn))
					dOff = append(dOff, call(off, sOff))
				} else {
					dOff = append(dOff, call(off, sOff))
					dOn = append(dOn, call(on, sOn))
				}
			}
			mOn, mOff := median(dOn), median(dOff)
			b.ReportMetric(float64(mOn.Nanoseconds())/1e3, "on-median-µs")
			b.ReportMetric(float64(mOff.Nanoseconds())/1e3, "off-median-µs")
			b.ReportMetric(float64(mOn)/float64(mOff), "on/off")
		})
	}
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
