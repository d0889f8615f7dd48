//go:build !linux || !(amd64 || arm64)

package localstat

import (
	"io/fs"
	"os"
)

// Lstat is os.Lstat: the raw path is Linux's, on amd64 and arm64.
func Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }

// Readlink is os.Readlink.
func Readlink(name string) (string, error) { return os.Readlink(name) }

// Local reports false: no raw path here.
func Local(string) bool { return false }

// LstatNoLinks answers nothing here: the caller walks the path itself.
func LstatNoLinks(string) (fs.FileInfo, bool) { return nil, false }
