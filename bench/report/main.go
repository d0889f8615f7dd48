package main

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// pair is a comparison measured in one run: ours against the baseline.
// A pair with a baseMetric compares two metrics of one benchmark, whose
// iterations ran both side by side; base then defaults to ours.
type pair struct {
	title, ours, base, metric, baseMetric string
}

// pairs lists the side-by-side comparisons the tables show as ratios.
var pairs = []pair{
	{title: "call overhead: plugin vs in-process (median)", ours: "BenchmarkCallOverhead/plugin", base: "BenchmarkCallOverhead/in-process", metric: "median-µs"},
	{title: "call overhead: plugin vs in-process (p99)", ours: "BenchmarkCallOverhead/plugin", base: "BenchmarkCallOverhead/in-process", metric: "p99-µs"},
	{title: "call overhead: call channel vs gRPC streams (median)", ours: "BenchmarkCallOverhead/plugin", base: "BenchmarkCallOverhead/plugin-grpc", metric: "median-µs"},
	{title: "call overhead: call channel vs gRPC streams (p99)", ours: "BenchmarkCallOverhead/plugin", base: "BenchmarkCallOverhead/plugin-grpc", metric: "p99-µs"},
	{title: "read_file 4 KiB: over HTTP vs over stdio (median)", ours: "BenchmarkReadOverFront/http/sequential", base: "BenchmarkReadOverFront/stdio/sequential", metric: "median-µs"},
	{title: "read_file 4 KiB: over HTTP vs over stdio (p99)", ours: "BenchmarkReadOverFront/http/sequential", base: "BenchmarkReadOverFront/stdio/sequential", metric: "p99-µs"},
	{title: "read_file 4 KiB, 8 in flight: over HTTP vs over stdio", ours: "BenchmarkReadOverFront/http/8-in-flight", base: "BenchmarkReadOverFront/stdio/8-in-flight", metric: "calls/s"},
	{title: "read_file 4 KiB over HTTP: a client that elicits vs one that does not (median)", ours: "BenchmarkReadOverFront/http-eliciting/sequential", base: "BenchmarkReadOverFront/http/sequential", metric: "median-µs"},
	{title: "a 4 KB read_file result encoded: in one pass vs as the SDK nests it", ours: "BenchmarkCallResultEncoding/once", base: "BenchmarkCallResultEncoding/sdk", metric: "ns/op"},
	{title: "serve start to first tools/list: warm vs cold spec cache", ours: "BenchmarkServeStartToList/warm", base: "BenchmarkServeStartToList/cold", metric: "median-ms"},
	{title: "run_bash true through the tool vs bash -c true", ours: "BenchmarkRunBash_True", base: "BenchmarkExecBash_True", metric: "ns/op"},
	{title: "grep GOROOT, literal: tool on ripgrep vs rg run directly, alternated", ours: "BenchmarkGrepGOROOT/literal", metric: "tool-rg-ms", baseMetric: "rg-direct-ms"},
	{title: "grep GOROOT, literal: tool on ripgrep in the sandbox vs rg run directly, alternated", ours: "BenchmarkGrepGOROOT/literal", metric: "tool-rg-sandboxed-ms", baseMetric: "rg-direct-ms"},
	{title: "grep GOROOT, literal: tool on its Go back-end vs rg run directly, alternated", ours: "BenchmarkGrepGOROOT/literal", metric: "tool-go-ms", baseMetric: "rg-direct-ms"},
	{title: "grep GOROOT, alternation: tool on ripgrep vs rg run directly, alternated", ours: "BenchmarkGrepGOROOT/alternation", metric: "tool-rg-ms", baseMetric: "rg-direct-ms"},
	{title: "grep GOROOT, alternation: tool on ripgrep in the sandbox vs rg run directly, alternated", ours: "BenchmarkGrepGOROOT/alternation", metric: "tool-rg-sandboxed-ms", baseMetric: "rg-direct-ms"},
	{title: "grep GOROOT, alternation: tool on its Go back-end vs rg run directly, alternated", ours: "BenchmarkGrepGOROOT/alternation", metric: "tool-go-ms", baseMetric: "rg-direct-ms"},
	{title: "grep GOROOT, ignore-case: tool on ripgrep vs rg run directly, alternated", ours: "BenchmarkGrepGOROOT/ignore-case", metric: "tool-rg-ms", baseMetric: "rg-direct-ms"},
	{title: "grep GOROOT, ignore-case: tool on ripgrep in the sandbox vs rg run directly, alternated", ours: "BenchmarkGrepGOROOT/ignore-case", metric: "tool-rg-sandboxed-ms", baseMetric: "rg-direct-ms"},
	{title: "grep GOROOT, ignore-case: tool on its Go back-end vs rg run directly, alternated", ours: "BenchmarkGrepGOROOT/ignore-case", metric: "tool-go-ms", baseMetric: "rg-direct-ms"},
}

var line = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$`)

func main() {
	in := flag.String("in", "", "go test -bench output (default stdin)")
	header := flag.String("header", "", "file whose text goes above the tables")
	flag.Parse()
	r := io.Reader(os.Stdin)
	if *in != "" {
		f, err := os.Open(*in)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		defer f.Close()
		r = f
	}
	results, order := parse(r)
	if *header != "" {
		b, err := os.ReadFile(*header)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Stdout.Write(b)
	}
	write(os.Stdout, results, order)
}

// results: benchmark name → metric unit → values over the runs.
func parse(r io.Reader) (map[string]map[string][]float64, []string) {
	results := map[string]map[string][]float64{}
	var order []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := line.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		name := m[1]
		if results[name] == nil {
			results[name] = map[string][]float64{}
			order = append(order, name)
		}
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			results[name][f[i+1]] = append(results[name][f[i+1]], v)
		}
	}
	return results, order
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func write(w io.Writer, results map[string]map[string][]float64, order []string) {
	fmt.Fprintln(w, "## Side by side")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| comparison | ours | baseline | ratio |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, p := range pairs {
		base, baseMetric := cmp.Or(p.base, p.ours), cmp.Or(p.baseMetric, p.metric)
		a, b := results[p.ours][p.metric], results[base][baseMetric]
		if len(a) == 0 || len(b) == 0 {
			continue
		}
		ma, mb := median(a), median(b)
		ratio := "–"
		if mb != 0 {
			ratio = fmt.Sprintf("%.2f×", ma/mb)
		}
		fmt.Fprintf(w, "| %s | %s %s | %s %s | %s |\n", p.title, num(ma), p.metric, num(mb), baseMetric, ratio)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Every benchmark (median over the runs)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| benchmark | runs | metrics |")
	fmt.Fprintln(w, "|---|---:|---|")
	for _, name := range order {
		units := make([]string, 0, len(results[name]))
		for u := range results[name] {
			units = append(units, u)
		}
		sort.Strings(units)
		var parts []string
		runs := 0
		for _, u := range units {
			parts = append(parts, num(median(results[name][u]))+" "+u)
			runs = max(runs, len(results[name][u]))
		}
		fmt.Fprintf(w, "| %s | %d | %s |\n", name, runs, strings.Join(parts, ", "))
	}
}

func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
