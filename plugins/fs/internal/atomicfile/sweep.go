package atomicfile

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// errNotTemp marks names Sweep must leave alone.
var errNotTemp = errors.New("not a temp file of a dead writer")

// staleAge is how old a temp file must be to go even when a process with
// its pid is running: the pid may have been reused.
const staleAge = time.Hour

// Alive reports whether a temp file written by pid may still be in use:
// this process, or any running process.
func Alive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Sweep removes from dir, a folder inside root, the temp files whose writer
// is gone (its pid is not running) or that are older than an hour. It
// returns the paths removed, inside root. A missing dir is not an error.
func Sweep(root *os.Root, dir string) ([]string, error) {
	d, err := root.Open(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	entries, err := d.ReadDir(-1)
	_ = d.Close()
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		name := filepath.Join(dir, e.Name())
		if err := sweepOne(root, name, e); err != nil {
			if !errors.Is(err, errNotTemp) {
				errs = append(errs, err)
			}
			continue
		}
		removed = append(removed, name)
	}
	return removed, errors.Join(errs...)
}

func sweepOne(root *os.Root, name string, e fs.DirEntry) error {
	pid, ok := tempPID(e.Name())
	if !ok {
		return errNotTemp
	}
	if Alive(pid) {
		fi, err := e.Info()
		if err != nil || time.Since(fi.ModTime()) < staleAge || pid == os.Getpid() {
			return errNotTemp
		}
	}
	return root.Remove(name)
}

// skipDirs are never walked by SweepTree: they hold no edited files and
// can be huge.
var skipDirs = map[string]bool{".git": true, "node_modules": true}

// SweepTree runs Sweep over dir and the folders below it inside root,
// breadth first, visiting at most maxDirs folders. It returns the paths
// removed.
func SweepTree(ctx context.Context, root *os.Root, dir string, maxDirs int) ([]string, error) {
	var removed []string
	queue := []string{dir}
	for visited := 0; len(queue) > 0 && visited < maxDirs; visited++ {
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		cur := queue[0]
		queue = queue[1:]
		r, _ := Sweep(root, cur)
		removed = append(removed, r...)
		d, err := root.Open(cur)
		if err != nil {
			continue
		}
		entries, _ := d.ReadDir(-1)
		_ = d.Close()
		for _, e := range entries {
			if e.IsDir() && !skipDirs[e.Name()] {
				queue = append(queue, filepath.Join(cur, e.Name()))
			}
		}
	}
	return removed, nil
}
