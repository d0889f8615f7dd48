package wire

import "google.golang.org/grpc"

// MaxMessageBytes lifts gRPC's 4 MiB message limit: tool inputs (edits of
// up to 10 MB each) and results (screenshots) are bigger.
const MaxMessageBytes = 256 << 20

// WindowBytes is the fixed HTTP/2 flow-control window of both sides. A
// fixed window turns off gRPC's bandwidth-delay probing, whose pings cost
// every small call a few syscalls; between two processes on one machine
// there is no bandwidth to probe.
const WindowBytes = 4 << 20

// StreamWorkers is how many goroutines each side keeps for the calls it
// serves.
const StreamWorkers = 4

// NewGRPCServer is the gRPC server factory of both sides (go-plugin's
// DefaultGRPCServer with the message limit lifted and a fixed window).
//
// Calls run on a few kept goroutines (a call that finds them all busy,
// such as long commands, gets a new one, as without them): a goroutine
// started for each call grew its stack anew every time, through the gRPC
// handler, the tool and its JSON.
func NewGRPCServer(opts []grpc.ServerOption) *grpc.Server {
	opts = append(opts,
		grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes),
		grpc.InitialWindowSize(WindowBytes), grpc.InitialConnWindowSize(WindowBytes),
		grpc.NumStreamWorkers(StreamWorkers))
	return grpc.NewServer(opts...)
}

// DialOptions are the gRPC options the host dials its plugins with: the
// fixed window that matches NewGRPCServer's.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithInitialWindowSize(WindowBytes), grpc.WithInitialConnWindowSize(WindowBytes)}
}
