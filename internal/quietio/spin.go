package quietio

// Spinner is a socket whose reads can wait for input by reading again,
// for a moment, before they wait in the poller: what Conn returns for a
// Unix socket on Linux.
type Spinner interface {
	// SpinWhile makes a read that finds nothing read again, letting the
	// processor's other goroutines and threads run between tries, for as
	// long as while reports true and at most 150 µs, before it waits in the
	// poller.
	// Call it before the first read.
	SpinWhile(while func() bool) error
	// Kick wakes a read that waits in the poller, which then spins as
	// SpinWhile says.
	Kick()
}
