package main

import (
	"strings"
	"testing"
)

func TestWrite_PairsAndMedians(t *testing.T) {
	t.Parallel()
	in := `goos: linux
BenchmarkCallOverhead/plugin-2         	    1000	    300000 ns/op	       200.0 median-µs	       900.0 p99-µs
BenchmarkCallOverhead/plugin-2         	    1000	    300000 ns/op	       100.0 median-µs	       700.0 p99-µs
BenchmarkCallOverhead/plugin-2         	    1000	    300000 ns/op	       300.0 median-µs	       800.0 p99-µs
BenchmarkCallOverhead/in-process-2     	    5000	     50000 ns/op	        50.00 median-µs	       100.0 p99-µs
BenchmarkGrepGOROOT/literal-2          	       3	 900000000 ns/op	       200.0 rg-direct-ms	       300.0 tool-rg-ms	         1.500 tool-rg-ratio
PASS
`
	results, order := parse(strings.NewReader(in))
	if len(order) != 3 || len(results["BenchmarkCallOverhead/plugin"]["median-µs"]) != 3 {
		t.Fatalf("parse: order %v, results %v", order, results)
	}
	var b strings.Builder
	write(&b, results, order)
	got := b.String()
	for _, want := range []string{
		"| call overhead: plugin vs in-process (median) | 200 median-µs | 50.00 median-µs | 4.00× |",
		"| call overhead: plugin vs in-process (p99) | 800 p99-µs | 100 p99-µs | 8.00× |",
		"| grep GOROOT, literal: tool on ripgrep vs rg run directly, alternated | 300 tool-rg-ms | 200 rg-direct-ms | 1.50× |",
		"| BenchmarkCallOverhead/plugin | 3 | 200 median-µs, 300000 ns/op, 800 p99-µs |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("write: missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "grep GOROOT, alternation") {
		t.Errorf("write: a pair with no figures was shown:\n%s", got)
	}
}
