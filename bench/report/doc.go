// Command report turns `go test -bench` output into BENCHMARKS.md tables.
package main
