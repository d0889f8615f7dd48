package netproxy

// CanonHost is canonHost, for the table of host spellings.
var CanonHost = canonHost

// HandshakeTimeout is how long a client has to send its request.
const HandshakeTimeout = handshakeTimeout
