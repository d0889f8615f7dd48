//go:build !unix

package mcpserver

import "os"

func pollable(f *os.File) *os.File { return f }
