//go:build linux && (amd64 || arm64)

package localstat

import (
	"strings"
)

// localTypes are the file systems whose lookups do not wait on a network
// or on a user-space server: a raw lstat there returns.
var localTypes = map[string]bool{
	"ext2": true, "ext3": true, "ext4": true, "xfs": true, "btrfs": true,
	"f2fs": true, "zfs": true, "bcachefs": true, "jfs": true, "reiserfs": true,
	"nilfs2": true, "tmpfs": true, "ramfs": true, "overlay": true,
	"squashfs": true, "erofs": true, "iso9660": true, "udf": true,
	"vfat": true, "msdos": true, "exfat": true, "ntfs3": true,
	"hfs": true, "hfsplus": true,
}

// table is what a mount table says of paths: the mount points at which
// some mount is of a file system outside localTypes.
type table struct {
	remote map[string]bool
}

// parseMountinfo reads a table from the text of /proc/self/mountinfo: per
// line, the mount point is the fifth field and the file system's type the
// first after the "-" that ends the optional fields. A line it cannot
// read makes its mount point remote, or, without one, the whole table
// unusable (ok false).
func parseMountinfo(text string) (t table, ok bool) {
	t.remote = map[string]bool{}
	for line := range strings.SplitSeq(text, "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 5 {
			return table{}, false
		}
		mp := unescape(f[4])
		typ := ""
		for i := 5; i < len(f)-1; i++ {
			if f[i] == "-" {
				typ = f[i+1]
				break
			}
		}
		if !localTypes[typ] {
			t.remote[mp] = true
		}
	}
	return t, true
}

// unescape undoes the octal escapes the kernel writes for a space, a tab,
// a newline and a backslash in a mount point (\040, \011, \012, \134).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// local reports whether every mount on the way to the absolute, clean
// path p is of a local file system: no mount point among "/", p's
// folders and p itself is remote.
func (t table) local(p string) bool {
	if len(p) == 0 || p[0] != '/' {
		return false
	}
	if len(t.remote) == 0 {
		return true
	}
	if t.remote["/"] {
		return false
	}
	for i := 1; i < len(p); i++ {
		if p[i] == '/' && t.remote[p[:i]] {
			return false
		}
	}
	return !t.remote[p]
}
