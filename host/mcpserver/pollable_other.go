//go:build !unix

package mcpserver

import (
	"io"
	"os"
)

func pollable(f *os.File) *os.File { return f }

func stdio(f *os.File) io.ReadWriteCloser { return f }
