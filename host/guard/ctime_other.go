//go:build !linux

package guard

import "os"

// ctimeOf is 0 where the status change time is not read: size and mtime
// key the hash alone.
func ctimeOf(os.FileInfo) int64 { return 0 }

// inodeOf reports no inode: files are keyed by path.
func inodeOf(os.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }
