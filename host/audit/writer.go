package audit

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// File names in the audit folder (see the format the reader shares).
const (
	LiveName   = "audit.jsonl"
	keyName    = "key"
	rotPrefix  = "audit-"
	rotSuffix  = ".jsonl"
	rotLayout  = "20060102T150405.000000000Z"
	keyBytes   = 32
	dirMode    = 0o700
	fileMode   = 0o600
	syncLines  = 256
	syncPeriod = 100 * time.Millisecond
)

// Defaults of audit.max_size_mb and audit.keep.
const (
	DefaultMaxSizeMB = 64
	DefaultKeep      = 10
)

// WriterOptions configures a Writer.
type WriterOptions struct {
	// Dir is the audit folder, created 0700 on first use.
	Dir string
	// MaxSize is the live file's size past which it is rotated; 0 =
	// DefaultMaxSizeMB MiB.
	MaxSize int64
	// Keep is how many rotated files are kept, oldest removed first; 0 =
	// DefaultKeep, negative = none.
	Keep int
	// Now is the clock of rotated names; nil = time.Now.
	Now func() time.Time
	// SyncPeriod is how often the flusher writes out and fsyncs; 0 =
	// 100 ms.
	SyncPeriod time.Duration
}

// Writer appends lines to the live audit file, safe for concurrent use.
// A line goes into a buffer (AppendLine) that a flusher writes out and
// fsyncs every syncPeriod or syncLines lines, or straight to the file with
// what waits before it (WriteLine), when it must be in the kernel before
// the caller goes on. Lines are whole and in order; the file rotates by
// size at line boundaries.
type Writer struct {
	opts WriterOptions

	mu sync.Mutex
	f  *os.File
	// buf holds whole lines not yet written to f; size counts f's bytes
	// and buf's.
	buf     []byte
	size    int64
	lines   int // lines in buf
	pending int // lines written to f since the last fsync
	// failed is the last background write's error, returned to the next
	// caller; the lines stay buffered (up to maxBuf) for the next try.
	failed error
	// syncs counts the fsyncs of f running outside mu; f is closed only
	// once they are done.
	syncs  *sync.WaitGroup
	closed bool
	key    []byte

	kick chan struct{}
	done chan struct{}
	wg   sync.WaitGroup
}

// maxBuf bounds the lines held while the disk refuses them.
const maxBuf = 4 << 20

// NewWriter returns a Writer on opts.Dir; nothing is created until the
// first line (or Key) needs it.
func NewWriter(opts WriterOptions) *Writer {
	if opts.MaxSize <= 0 {
		opts.MaxSize = DefaultMaxSizeMB << 20
	}
	if opts.Keep == 0 {
		opts.Keep = DefaultKeep
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SyncPeriod <= 0 {
		opts.SyncPeriod = syncPeriod
	}
	w := &Writer{opts: opts, kick: make(chan struct{}, 1), done: make(chan struct{})}
	w.wg.Add(1)
	go w.flusher()
	return w
}

// Dir returns the audit folder.
func (w *Writer) Dir() string { return w.opts.Dir }

// WriteLine appends line (one JSON object, '\n'-terminated) to the live
// file now, after the lines buffered before it, in one write. Its error
// says what could not be done; the line was not written.
func (w *Writer) WriteLine(line []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.add(line); err != nil {
		return err
	}
	return w.writeOut()
}

// AppendLine appends line to the buffer the flusher writes out within
// syncPeriod. Its error is the live file's that could not be opened, or
// the last background write's that failed: the line may be lost.
func (w *Writer) AppendLine(line []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.add(line); err != nil {
		return err
	}
	if w.lines >= syncLines {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
	if err := w.failed; err != nil {
		return err
	}
	return nil
}

// add puts line in the buffer, rotating first when it would take the file
// past MaxSize; the caller holds mu.
func (w *Writer) add(line []byte) error {
	if w.closed {
		return errors.New("the audit log is closed")
	}
	if w.f == nil {
		if err := w.open(); err != nil {
			return err
		}
	}
	if w.size > 0 && w.size+int64(len(line)) > w.opts.MaxSize {
		if err := w.writeOut(); err != nil {
			return err
		}
		if err := w.rotate(); err != nil {
			return err
		}
		if err := w.open(); err != nil {
			return err
		}
	}
	if len(w.buf)+len(line) > maxBuf {
		if err := w.writeOut(); err != nil {
			return fmt.Errorf("the audit log is %d bytes behind: %w", len(w.buf), err)
		}
	}
	w.buf = append(w.buf, line...)
	w.size += int64(len(line))
	w.lines++
	return nil
}

// writeOut writes the buffer to the live file; the caller holds mu.
func (w *Writer) writeOut() error {
	if len(w.buf) == 0 {
		return nil
	}
	n, err := w.f.Write(w.buf)
	if err != nil {
		// What was written stays written; the rest waits for the next try.
		w.buf = w.buf[:copy(w.buf, w.buf[n:])]
		w.failed = fmt.Errorf("write %s: %w", w.f.Name(), err)
		return w.failed
	}
	w.buf, w.failed = w.buf[:0], nil
	w.pending += w.lines
	w.lines = 0
	return nil
}

// open opens (creating) the live file; the caller holds mu.
func (w *Writer) open() error {
	if err := w.ensureDir(); err != nil {
		return err
	}
	name := filepath.Join(w.opts.Dir, LiveName)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, fileMode)
	if err != nil {
		return fmt.Errorf("open the audit log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("open the audit log: %w", err)
	}
	w.f, w.size, w.syncs = f, fi.Size()+int64(len(w.buf)), &sync.WaitGroup{}
	return nil
}

func (w *Writer) ensureDir() error {
	if w.opts.Dir == "" {
		return errors.New("the audit log has no folder (audit.path)")
	}
	if err := os.MkdirAll(w.opts.Dir, dirMode); err != nil {
		return fmt.Errorf("create the audit folder: %w", err)
	}
	return nil
}

// rotate syncs and renames the live file and drops the oldest rotated
// files past Keep; the caller holds mu and has written the buffer out.
func (w *Writer) rotate() error {
	f := w.f
	w.f, w.pending = nil, 0
	w.syncs.Wait()
	syncErr := f.Sync()
	closeErr := f.Close()
	if err := errors.Join(syncErr, closeErr); err != nil {
		return fmt.Errorf("rotate the audit log: %w", err)
	}
	name := rotPrefix + w.opts.Now().UTC().Format(rotLayout) + rotSuffix
	if err := os.Rename(filepath.Join(w.opts.Dir, LiveName), filepath.Join(w.opts.Dir, name)); err != nil {
		return fmt.Errorf("rotate the audit log: %w", err)
	}
	return w.prune()
}

// prune removes the oldest rotated files past Keep.
func (w *Writer) prune() error {
	rotated, err := Rotated(w.opts.Dir)
	if err != nil {
		return fmt.Errorf("rotate the audit log: %w", err)
	}
	keep := max(w.opts.Keep, 0)
	var errs []error
	for len(rotated) > keep {
		if err := os.Remove(filepath.Join(w.opts.Dir, rotated[0])); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		rotated = rotated[1:]
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove old audit files: %w", err)
	}
	return nil
}

// Rotated lists the rotated files in dir, oldest first (their names sort
// in time order).
func Rotated(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if n := e.Name(); strings.HasPrefix(n, rotPrefix) && strings.HasSuffix(n, rotSuffix) && e.Type().IsRegular() {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Sync writes the buffered lines out and fsyncs them. The fsync runs
// outside the lock, so lines go on being added while the disk catches up.
func (w *Writer) Sync() error {
	w.mu.Lock()
	if w.f == nil {
		w.mu.Unlock()
		return nil
	}
	if err := w.writeOut(); err != nil {
		w.mu.Unlock()
		return err
	}
	if w.pending == 0 {
		w.mu.Unlock()
		return nil
	}
	f, syncs := w.f, w.syncs
	w.pending = 0
	syncs.Add(1)
	w.mu.Unlock()
	defer syncs.Done()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync the audit log: %w", err)
	}
	return nil
}

// flusher writes out and fsyncs every syncPeriod, or as soon as syncLines
// lines wait.
func (w *Writer) flusher() {
	defer w.wg.Done()
	t := time.NewTicker(w.opts.SyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-t.C:
		case <-w.kick:
		}
		_ = w.Sync() // kept in failed, for the next caller
	}
}

// Close writes out, fsyncs and closes the live file.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	close(w.done)
	var err error
	if w.f != nil {
		w.syncs.Wait()
		werr := w.writeOut()
		serr := w.f.Sync()
		err = errors.Join(werr, serr, w.f.Close())
		w.f = nil
	}
	w.mu.Unlock()
	w.wg.Wait()
	return err
}

// Key returns the per-install HMAC key, <dir>/key: 32 random bytes, 0600,
// made on first use.
func (w *Writer) Key() ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.key != nil {
		return w.key, nil
	}
	if err := w.ensureDir(); err != nil {
		return nil, err
	}
	k, err := loadKey(filepath.Join(w.opts.Dir, keyName))
	if err != nil {
		return nil, err
	}
	w.key = k
	return k, nil
}

func loadKey(name string) ([]byte, error) {
	for range 3 {
		k, err := os.ReadFile(name)
		if err == nil {
			if len(k) == keyBytes {
				return k, nil
			}
			if len(k) > 0 {
				return nil, fmt.Errorf("the audit key %s holds %d bytes, not %d: move it away to make a new one", name, len(k), keyBytes)
			}
			// Another process is writing it: read again.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read the audit key: %w", err)
		}
		k = make([]byte, keyBytes)
		if _, err := rand.Read(k); err != nil {
			return nil, fmt.Errorf("make the audit key: %w", err)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
		if errors.Is(err, fs.ErrExist) {
			continue // another process made it first
		}
		if err != nil {
			return nil, fmt.Errorf("make the audit key: %w", err)
		}
		_, werr := f.Write(k)
		serr := f.Sync()
		cerr := f.Close()
		if err := errors.Join(werr, serr, cerr); err != nil {
			os.Remove(name)
			return nil, fmt.Errorf("make the audit key: %w", err)
		}
		return k, nil
	}
	return nil, fmt.Errorf("the audit key %s is empty: remove it to make a new one", name)
}
