//go:build unix

package grep

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A named pipe given as the path would block a reader forever: it is not
// searched.
func TestSearchSpecialFileRoot(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, b := range backends(t) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := b.engine.Search(ctx, Query{Root: fifo, Pattern: "x", MaxResults: 1})
		cancel()
		if err != nil || res.Shown != 0 {
			t.Errorf("%s: Search(fifo) = %+v, %v; want no match and no error", b.name, res, err)
		}
	}
}
