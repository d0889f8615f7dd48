package tools

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/yagent/yagent/plugins/fs/internal/wsroot"
	"github.com/yagent/yagent/sdk"
)

// maxEditFileSize is the largest file the edit tools load; a var so tests
// can lower it.
var maxEditFileSize int64 = 256 << 20

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// refuseKind is the error for a path that is not a regular file.
func refuseKind(tool, path string, m fs.FileMode) error {
	if m.IsDir() {
		hint := "use list_dir to see what it holds"
		if tool != "read_file" {
			hint = "give the path of a file inside it"
		}
		return sdk.Errorf(sdk.CodeInvalidInput, "%s is a directory: %s", path, hint)
	}
	return sdk.Errorf(sdk.CodeInvalidInput, "%s is %s: %s works on regular files only", path, kindOf(m), tool)
}

// openRegular opens an existing target for reading. Anything but a regular
// file is refused before it is opened (opening a FIFO would block), on what
// the resolution found it to be, and the open itself never blocks
// (O_NONBLOCK) in case the path was swapped since.
func openRegular(tool, path string, t wsroot.Target) (wsroot.File, fs.FileInfo, error) {
	fi := t.Info
	if fi == nil {
		var err error
		if fi, err = t.Root.Stat(t.Rel); err != nil {
			return nil, nil, wsroot.Describe(path, err)
		}
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, refuseKind(tool, path, fi.Mode())
	}
	f, err := t.OpenRead(os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY)
	if err != nil {
		return nil, nil, wsroot.Describe(path, err)
	}
	fi, err = f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, nil, refuseKind(tool, path, fi.Mode())
	}
	return f, fi, nil
}

// readAll reads a regular file whole, up to limit bytes.
func readAll(tool, path string, t wsroot.Target, limit int64) ([]byte, fs.FileInfo, error) {
	f, fi, err := openRegular(tool, path, t)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, nil, sdk.Errorf(sdk.CodeInvalidInput, "%s is %d bytes, over the %d bytes %s loads: edit it with a shell tool instead",
			path, fi.Size(), limit, tool)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, nil, sdk.Errorf(sdk.CodeInvalidInput, "%s grew over the %d bytes %s loads while being read", path, limit, tool)
	}
	return b, fi, nil
}

// stillAs checks, right before a rename, that the file is still the bytes
// the call read (existed) or still absent (!existed).
func stillAs(path string, t wsroot.Target, existed bool, want []byte) error {
	if !existed {
		if _, err := t.Root.Lstat(t.Rel); err == nil {
			return errConflict(path, "file was created before write (someone else made it after this call looked)")
		}
		return nil
	}
	got, err := t.Root.ReadFile(t.Rel)
	if err != nil {
		return errConflict(path, fmt.Sprintf("file changed before write (it can no longer be read: %v)", err))
	}
	if !bytes.Equal(got, want) {
		return errConflict(path, "file changed before write (someone else wrote it while this edit ran)")
	}
	return nil
}
