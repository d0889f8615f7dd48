//go:build unix

package sdk

import (
	"os"

	"golang.org/x/sys/unix"
)

// detachStdin points the plugin's standard input at /dev/null.
//
// go-plugin hands every plugin the host's stdin. Under `yagent serve` that
// is the MCP stream: a plugin, or a command it starts, reading stdin would
// steal the client's messages. No plugin has a reason to read it.
func detachStdin() error {
	null, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	if err := unix.Dup2(int(null.Fd()), 0); err != nil {
		null.Close()
		return err
	}
	os.Stdin = null
	return nil
}
