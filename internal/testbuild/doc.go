// Package testbuild compiles the module's binaries — the host, the plugins
// and the test fixtures — for tests that run them as real processes, so no
// test ever runs a stale binary from bin/.
//
// Build takes every binary a test needs in one call and compiles them in one
// go build per set of flags, so the packages they share are compiled once
// and the links run side by side.
package testbuild
