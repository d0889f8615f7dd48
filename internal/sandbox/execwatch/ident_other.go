//go:build !unix || aix || solaris || illumos

package execwatch

import "os"

// keyOf has no device and inode here: only size and time key the cache.
func keyOf(fi os.FileInfo) (hashKey, bool) {
	return hashKey{size: fi.Size(), mtime: fi.ModTime().UnixNano()}, true
}
