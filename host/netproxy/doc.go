// Package netproxy is the egress proxy the host runs for one session: the
// only way out of the network namespace its sandboxed commands run in, and
// the proxy its browser is pointed at. It speaks HTTP (CONNECT tunnels and
// plain http:// requests in absolute form) and SOCKS5 on the same listener,
// telling them apart by the first byte a client sends.
//
// The proxy decides nothing itself. For every target it asks a Decider
// twice: once about the host as the client wrote it, before any lookup, so
// a refused name is never sent to DNS; and once about the addresses the
// name resolved to, of which it dials only those the Decider returned. The
// name is resolved once per connection (once per request for plain HTTP),
// and the connection goes to an address that lookup produced, so a DNS
// answer that changes between the question and the dial cannot redirect
// it.
//
// Every connection that reached the Decider ends in one Event for the
// audit trail: what was asked, what was decided, where it went and how
// many bytes moved each way.
package netproxy
