//go:build !linux || !(amd64 || arm64)

package wsroot

import (
	"io/fs"
	"os"
)

// rawDir is the raw path's folder, which only Linux on amd64 and arm64
// has: every call here goes to os.Root.
type rawDir struct{}

func newRawDir(*os.Root, string) *rawDir { return nil }

func (*rawDir) close() {}

func (*rawDir) lstat(string) (fs.FileInfo, bool) { return nil, false }

func (*rawDir) openRead(string, string, int) (File, bool) { return nil, false }
