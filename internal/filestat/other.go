//go:build !unix

package filestat

import "os"

// Ctime is 0: the status change time is not read here.
func Ctime(os.FileInfo) int64 { return 0 }

// Inode reports no inode: files are keyed by path.
func Inode(os.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }
