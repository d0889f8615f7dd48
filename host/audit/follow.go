package audit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
			return err
		}
		fl.lastRotated = filepath.Base(path)
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

	lastRotated string // the newest rotated file's name already read
}

// poll reads what was appended since the last poll, the rotated files that
// appeared meanwhile included, oldest first.
func (fl *follower) poll(ctx context.Context) error {
	// A few rounds: the file followed rotated away means the new live file
	// is to open, and a rename seen after a listing shows in the next one,
	// since the writer renames the live file before it creates the new one.
	for range 4 {
		if fl.f == nil {
			if err := fl.open(); err != nil || fl.f == nil {
				return err
			}
		}
		if err := fl.rotatedSince(ctx); err != nil {
			return err
		}
		if fl.f == nil {
			continue
		}
		live, err := os.Stat(filepath.Join(fl.r.Dir, readLiveName))
		if err == nil && os.SameFile(live, fl.info) {
			return fl.drain(ctx)
		}
	}
	if fl.f == nil {
		return nil
	}
	// Removed, not rotated: nothing more comes to it.
	if err := fl.drain(ctx); err != nil {
		return err
	}
	fl.close(true)
	return nil
}

// rotatedSince reads each rotated file newer than the last one read; the
// one that is the file followed is read on from where it was, through the
// open file, and then closed.
func (fl *follower) rotatedSince(ctx context.Context) error {
	files, err := fl.r.Files()
	if err != nil {
		return err
	}
	for _, path := range files {
		name := filepath.Base(path)
		if !isRotated(name) || name <= fl.lastRotated {
			continue
		}
		st, err := os.Stat(path)
		if err != nil {
			continue // removed since the listing
		}
		if fl.f != nil && os.SameFile(st, fl.info) {
			fl.split.file = path // its lines are there now, numbered alike
			if err := fl.drain(ctx); err != nil {
				return err
			}
			fl.close(true)
		} else if err := fl.r.readFile(ctx, path, fl.emit); err != nil {
			return err
		}
		fl.lastRotated = name
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
		fl.r.warn(fmt.Errorf("%s:%d: line cut short (no newline at the end of the file), skipped", fl.split.file, fl.split.no+1))
	}
	fl.f.Close()
	fl.f = nil
}
