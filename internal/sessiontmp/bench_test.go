//go:build unix

package sessiontmp

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkSession makes a session's folder and ends it, as a session's
// first call and its end do: plain, and sized (a tmpfs mounted on it and
// detached at the end) where this process may mount one. size-ratio is
// sized against plain, the two one after the other in each iteration.
func BenchmarkSession(b *testing.B) {
	plain, err := Open(Options{Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close()
	sized, err := Open(Options{Root: b.TempDir(), SizeMB: 4096})
	if err != nil {
		b.Fatal(err)
	}
	defer sized.Close()
	if _, err := sized.Dir("probe"); err != nil {
		b.Fatal(err)
	}
	sized.End("probe")
	if mb, why := sized.Size(); mb == 0 {
		b.Skipf("no tmpfs here: %v", why)
	}
	var tPlain, tSized int64
	b.ResetTimer()
	for i := range b.N {
		id := strconv.Itoa(i)
		for _, f := range []struct {
			f   *Folders
			sum *int64
		}{{plain, &tPlain}, {sized, &tSized}} {
			start := nanotime()
			if _, err := f.f.Dir(id); err != nil {
				b.Fatal(err)
			}
			f.f.End(id)
			*f.sum += nanotime() - start
		}
	}
	b.ReportMetric(float64(tPlain)/float64(b.N)/1e3, "plain-µs/op")
	b.ReportMetric(float64(tSized)/float64(b.N)/1e3, "sized-µs/op")
	b.ReportMetric(float64(tSized)/float64(tPlain), "size-ratio")
}

func nanotime() int64 { return time.Now().UnixNano() }
