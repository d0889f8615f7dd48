//go:build !unix || aix

package policy

import "os"

// statIdentity reports nothing here: a file is matched with os.SameFile
// and by its content, hashed on every use.
func statIdentity(os.FileInfo) (dev, ino uint64, ctime int64, ok bool) { return 0, 0, 0, false }
