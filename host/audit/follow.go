package audit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// defaultPoll is how often Follow looks at the folder: a stat and a read
// that finds nothing cost microseconds, and an admin watching reads in
// seconds.
const defaultPoll = 200 * time.Millisecond

// Follow hands emit the lines that match as Read does, then each line
// appended after, in order, across rotations (the live file renamed and a
// new one created), until ctx ends; then it returns nil. It polls the folder
// every r.Poll.
func (r *Reader) Follow(ctx context.Context, emit func(*Line) error) error {
	fl := &follower{r: r, emit: emit}
	files, err := r.Files()
	if err != nil {
		return err
	}
	for _, path := range files {
		if !isRotated(filepath.Base(path)) {
			continue // the live file, which poll reads
		}
		if err := r.readFile(ctx, path, emit); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		fl.markDone(filepath.Base(path))
	}
	defer fl.close(false)
	interval := r.Poll
	if interval <= 0 {
		interval = defaultPoll
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if err := fl.poll(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// follower is Follow's state: the file it reads as the live one, opened,
// so that the writer renaming it loses nothing still to read.
type follower struct {
	r    *Reader
	emit func(*Line) error

	f     *os.File // nil until the live file exists, and after it was rotated
	info  os.FileInfo
	br    *bufio.Reader
	split lineSplitter

	done    map[string]bool // the rotated files read, by name
	doneAge []string        // their names oldest first, to bound done
	retired []os.FileInfo   // files read to their end before a listing named them
}

// maxDone bounds the rotated names remembered: far more than a folder
// keeps, so a name forgotten is one of a file long pruned.
const maxDone = 1024

func (fl *follower) markDone(name string) {
	if fl.done == nil {
		fl.done = map[string]bool{}
	}
	fl.done[name] = true
	fl.doneAge = append(fl.doneAge, name)
	if len(fl.doneAge) > maxDone {
		delete(fl.done, fl.doneAge[0])
		fl.doneAge = fl.doneAge[1:]
	}
}

// poll reads what was appended since the last poll, the rotated files that
// appeared meanwhile included, oldest first.
func (fl *follower) poll(ctx context.Context) error {
	// A few rounds, each a file the writer went on from: it rotates faster
	// than a poll only in tests, and the next poll goes on where this ended.
	for range 4 {
		if fl.f == nil {
			if err := fl.open(); err != nil {
				return err
			}
			// What was rotated before the live file opened is older.
			opened := fl.f != nil
			if err := fl.rotatedSince(ctx); err != nil {
				return err
			}
			if !opened {
				return nil
			}
			if fl.f == nil {
				continue // rotated already, and read
			}
		}
		live, err := os.Stat(filepath.Join(fl.r.Dir, readLiveName))
		if err == nil && os.SameFile(live, fl.info) {
			return fl.drain(ctx)
		}
		// Renamed, so whole, and older than any file rotated after it: read
		// it to its end first, and remember it, so that the listing that
		// names it does not read it again (a listing taken while the
		// writer renames may not show it yet).
		if err := fl.drain(ctx); err != nil {
			return err
		}
		if len(fl.retired) == maxRetired {
			fl.retired = fl.retired[1:]
		}
		fl.retired = append(fl.retired, fl.info)
		fl.close(true)
		if err := fl.rotatedSince(ctx); err != nil {
			return err
		}
	}
	return nil
}

// maxRetired bounds the files remembered as read before a listing named
// them: each is named within a poll or two.
const maxRetired = 16

// rotatedSince reads each rotated file not read yet, oldest first; the one
// that is the file followed is read on from where it was, through the open
// file, and then closed. Not read yet, rather than newer than the last one
// read: a listing taken while the writer renames may miss a file that the
// next one shows.
func (fl *follower) rotatedSince(ctx context.Context) error {
	files, err := fl.r.Files()
	if err != nil {
		return err
	}
	for _, path := range files {
		name := filepath.Base(path)
		if !isRotated(name) || fl.done[name] {
			continue
		}
		st, err := os.Stat(path)
		if err != nil {
			continue // removed since the listing
		}
		if slices.ContainsFunc(fl.retired, func(fi os.FileInfo) bool { return os.SameFile(st, fi) }) {
			// read through the open file already
		} else if fl.f != nil && os.SameFile(st, fl.info) {
			fl.split.file = path // its lines are there now, numbered alike
			if err := fl.drain(ctx); err != nil {
				return err
			}
			fl.close(true)
		} else if err := fl.r.readFile(ctx, path, fl.emit); err != nil {
			return err
		}
		fl.markDone(name)
	}
	return nil
}

// open opens the live file if it exists.
func (fl *follower) open() error {
	path := filepath.Join(fl.r.Dir, readLiveName)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit: %w", err)
	}
	fl.f, fl.info, fl.br = f, info, bufio.NewReader(f)
	fl.split = lineSplitter{file: path}
	return nil
}

// drain hands on the whole lines written to the open file so far.
func (fl *follower) drain(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		raw, long, err := fl.split.next(fl.br)
		if long {
			fl.r.warn(fmt.Errorf("%s:%d: line over %d bytes, skipped", fl.split.file, fl.split.no, maxLineBytes))
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("audit: read %s: %w", fl.split.file, err)
		}
		if err := fl.r.take(raw, fl.split.file, fl.split.no, fl.emit); err != nil {
			return err
		}
	}
}

// close lets go of the file followed; once it is done with (rotated or
// removed), a line it still holds unfinished will never be finished.
func (fl *follower) close(done bool) {
	if fl.f == nil {
		return
	}
	if done && fl.split.pending() {
		fl.r.warn(fmt.Errorf("%s:%d: line cut short (no newline at the end of the file, since rotated), skipped", fl.split.file, fl.split.no+1))
	}
	fl.f.Close()
	fl.f = nil
}
