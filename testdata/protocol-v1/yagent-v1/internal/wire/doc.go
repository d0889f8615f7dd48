// Package wire holds what both ends of the host–plugin connection share:
// the names of the variables that hand a plugin its inherited descriptors,
// the go-plugin plugin-set key, the frames of the call channel, the gRPC
// server and dial options with their message and window sizes, the
// channel's mutual TLS, and the socket pairs and inherited descriptors the
// host passes and the plugin takes.
//
// The sdk (the plugin's side) and internal/remote (the host's side) import
// it. It is internal to this module: a plugin author reaches none of it,
// only the sdk's API.
package wire
