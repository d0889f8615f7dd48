package sandbox

import (
	"net"
	"os"
)

// EgressNamespace is a network namespace made for one session under
// sandbox.network: proxy, with loopback up and the session's proxy
// listening inside it: its commands, which enter it, reach the proxy on
// their own loopback and nothing else. The host makes it and serves
// Listener from outside it; the plugin enters it by Path.
type EgressNamespace struct {
	// Listener accepts the commands' connections to the proxy; it was
	// made inside the namespace and stays there whoever serves it.
	Listener net.Listener
	// Path is where a process of the same user opens the namespace
	// (/proc/<pid>/fd/<fd> of the host), as long as the namespace is
	// open.
	Path string

	ns *os.File
}

// Close closes the listener and lets the namespace go once no process
// is in it.
func (e *EgressNamespace) Close() error {
	err := e.Listener.Close()
	if e.ns != nil {
		_ = e.ns.Close()
	}
	return err
}
