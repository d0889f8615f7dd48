//go:build !linux

package hostile

// unmountUnder: only Linux hosts mount the session temp folders.
func unmountUnder(string) {}
