package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// TempPrefix starts the name of every temp file this package writes.
const TempPrefix = ".yagent-tmp-"

// TempName returns a fresh temp file name for a writer with process id pid.
func TempName(pid int) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return TempPrefix + strconv.Itoa(pid) + "-" + hex.EncodeToString(b[:])
}

// tempPID returns the writer pid a temp file name carries.
func tempPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, TempPrefix)
	if !ok {
		return 0, false
	}
	pidText, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(pidText)
	return pid, err == nil && pid > 0
}

// Options tune one Write.
type Options struct {
	// Replaces is the file being replaced; the new file gets its mode bits
	// (permissions, setuid, setgid, sticky) and, when the process may, its
	// owner. Nil means a new file: created 0666 less the process umask.
	Replaces fs.FileInfo
	// BeforeRename runs once the temp file is complete and synced, right
	// before it replaces the target; an error aborts the write, removes the
	// temp file and is returned as is.
	BeforeRename func() error
}

// Write replaces name, a path inside root, with data. name must not be a
// symlink the caller wants kept: resolve it to its target first. The folder
// must exist.
//
// The folder is opened once, as a root of its own: the temp file, the
// rename and the cleanup all happen in that very folder even if its path
// is swapped for a symlink meanwhile.
func Write(root *os.Root, name string, data []byte, opts Options) (err error) {
	dir := filepath.Dir(name)
	d, err := root.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open folder %s: %w", dir, err)
	}
	defer d.Close()
	base := filepath.Base(name)
	tmp := TempName(os.Getpid())
	perm := fs.FileMode(0o666)
	if opts.Replaces != nil {
		perm = 0o600
	}
	f, err := d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("create temp file in %s: %w", dir, err)
	}
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				_ = f.Close()
			}
			_ = d.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write temp file: %w", err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("sync temp file: %w", err)
	}
	if opts.Replaces != nil {
		if uid, gid, ok := owner(opts.Replaces); ok && uid != os.Getuid() {
			_ = f.Chown(uid, gid) // allowed for root only; others keep their uid
		}
		// fchmod after chown (which clears setuid): exact bits, no umask.
		mode := opts.Replaces.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		if err = f.Chmod(mode); err != nil {
			return fmt.Errorf("set mode of temp file: %w", err)
		}
	}
	closed = true
	if err = f.Close(); err != nil {
		return fmt.Errorf("close temp file: %w", err)
	}
	if opts.BeforeRename != nil {
		if err = opts.BeforeRename(); err != nil {
			return err
		}
	}
	if err = d.Rename(tmp, base); err != nil {
		return fmt.Errorf("replace %s: %w", name, err)
	}
	if df, derr := d.Open("."); derr == nil {
		_ = df.Sync() // best effort: make the rename itself durable
		_ = df.Close()
	}
	return nil
}

func owner(fi fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}
