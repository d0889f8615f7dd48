package audit

import (
	"testing"
	"time"
)

// TestAppendTime: the hand-written time is the layout's, nanoseconds
// always written.
func TestAppendTime(t *testing.T) {
	t.Parallel()
	for _, tm := range []time.Time{
		time.Date(2026, 12, 1, 17, 42, 4, 123456789, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		time.Date(999, 1, 2, 0, 0, 0, 7, time.UTC),
	} {
		if got, want := string(appendTime(nil, tm)), tm.Format(timeLayout); got != want {
			t.Errorf("appendTime = %q, want %q", got, want)
		}
	}
}
