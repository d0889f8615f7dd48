//go:build !unix

package grep

import (
	"io"
	"os"
)

// load returns the contents of the file at path, read into the scanner's
// buffer; release must be called when the data is no longer used.
func (sc *scanner) load(path string) ([]byte, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	buf := sc.grow(int(info.Size()) + 1)
	n := 0
	for {
		if n == len(buf) {
			buf = append(buf, 0)[:n]
			buf = buf[:cap(buf)]
		}
		m, err := f.Read(buf[n:])
		n += m
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
	}
	sc.keep(buf)
	return buf[:n], func() {}, nil
}
