//go:build unix

package filestat

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestIdentity_FollowsTheInode: a rename keeps the inode and moves the
// status change time; a chmod moves it too, though the mtime is put back;
// a new file at the same path is another inode.
func TestIdentity_FollowsTheInode(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	if err := os.WriteFile(a, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(a, past, past); err != nil {
		t.Fatal(err)
	}
	fi := stat(t, a)
	dev, ino, ok := Inode(fi)
	if !ok || ino == 0 {
		t.Fatalf("Inode = %d, %d, %v; want the file's", dev, ino, ok)
	}
	var raw syscall.Stat_t
	if err := syscall.Stat(a, &raw); err != nil {
		t.Fatal(err)
	}
	if uint64(raw.Ino) != ino || uint64(raw.Dev) != dev {
		t.Errorf("Inode = %d/%d, stat(2) says %d/%d", dev, ino, raw.Dev, raw.Ino)
	}
	// The mtime was set an hour back; the status change time is now.
	ctime := Ctime(fi)
	if recent := time.Now().Add(-time.Minute).UnixNano(); ctime < recent {
		t.Fatalf("Ctime = %d; want the time of the last change (after %d), not the mtime %d", ctime, recent, past.UnixNano())
	}

	if err := os.Chmod(a, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(a, past, past); err != nil {
		t.Fatal(err)
	}
	if c := Ctime(stat(t, a)); c < ctime {
		t.Errorf("Ctime after a chmod = %d, before it %d: it went back", c, ctime)
	}

	b := filepath.Join(dir, "b")
	if err := os.Rename(a, b); err != nil {
		t.Fatal(err)
	}
	if _, ino2, _ := Inode(stat(t, b)); ino2 != ino {
		t.Errorf("renamed: inode %d, was %d", ino2, ino)
	}
	if err := os.WriteFile(a, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ino3, _ := Inode(stat(t, a)); ino3 == ino {
		t.Errorf("a new file at the old path has the old inode %d", ino)
	}
}

// TestIdentity_UnknownInfo: a FileInfo that is not a stat of this system
// gives nothing to key by.
func TestIdentity_UnknownInfo(t *testing.T) {
	fi := fakeInfo{}
	if c := Ctime(fi); c != 0 {
		t.Errorf("Ctime = %d; want 0", c)
	}
	if _, _, ok := Inode(fi); ok {
		t.Error("Inode ok for a FileInfo without a stat")
	}
}

func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

type fakeInfo struct{ os.FileInfo }

func (fakeInfo) Sys() any { return nil }
