//go:build linux

package sessiontmp

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// mountSized mounts on dir a tmpfs of sizeMB MiB, closed to everyone but
// this user (0700), on which set-id bits and device files mean nothing.
func mountSized(dir string, sizeMB int) error {
	data := "size=" + strconv.Itoa(sizeMB) + "m,mode=0700,uid=" + strconv.Itoa(os.Getuid()) + ",gid=" + strconv.Itoa(os.Getgid())
	if err := unix.Mount("yagent-tmp", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, data); err != nil {
		return fmt.Errorf("mounting a tmpfs of %d MiB on %s: %w", sizeMB, dir, err)
	}
	return nil
}

// unmount detaches what is mounted on dir, if anything: the tmpfs goes
// once nothing (a kept namespace, a background command) holds it.
func unmount(dir string) error {
	err := unix.Unmount(dir, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW)
	if err == nil || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
		return nil // nothing mounted there, or nothing there
	}
	return err
}

// sized reports whether dir is the root of a tmpfs, and its free bytes
// and free inodes.
func sized(dir string) (free uint64, files uint64, ok bool) {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil || st.Type != unix.TMPFS_MAGIC {
		return 0, 0, false
	}
	return st.Bavail * uint64(st.Bsize), st.Ffree, true
}
