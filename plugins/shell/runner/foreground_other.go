//go:build !linux

package runner

import "os"

// foregroundOf cannot tell the reader without /proc: unknown, so what is
// typed asks.
func foregroundOf(*os.File) foreground { return foreground{} }
