package soak

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yagent/yagent/internal/proctest"
)

// procStat is one process's figures at one moment, read from /proc.
type procStat struct {
	name    string // "host", or the plugin binary's name
	pid     int
	threads int
	fds     int
	rssMiB  float64
}

// sample is the host and each of its plugins at one moment, and how many
// processes the plugins had started that were still there (strays).
type sample struct {
	label  string
	procs  []procStat
	strays int
}

// sample reads the figures once the processes are quiet: it polls (every
// 50 ms, for 3 s at most) until no plugin has a child left and, when base
// is given, no process holds more descriptors than it did then, or two
// polls in a row agree; a call that just returned may still be closing a
// pipe.
func (s *server) sample(t *testing.T, label string, base *sample) sample {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	var prev sample
	for {
		cur := s.read(t, label)
		quiet := cur.strays == 0
		if quiet && base != nil {
			quiet = !moreFDs(cur, *base)
		} else if quiet {
			quiet = prev.procs != nil && sameFDs(cur, prev)
		}
		if quiet || time.Now().After(deadline) {
			return cur
		}
		prev = cur
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *server) read(t *testing.T, label string) sample {
	t.Helper()
	host := s.cmd.Process.Pid
	out := sample{label: label}
	st, err := stat(host)
	if err != nil {
		t.Fatalf("read /proc of the host (%d): %v\nstderr:\n%s", host, err, s.stderr.String())
	}
	st.name = "host"
	out.procs = append(out.procs, st)
	var plugins []procStat
	for pid, exe := range proctest.Children(host) {
		if !strings.HasPrefix(exe, "yagent-plugin-") {
			continue
		}
		st, err := stat(pid)
		if err != nil {
			continue // exited between the listing and the read
		}
		st.name = exe
		plugins = append(plugins, st)
		out.strays += len(proctest.Children(pid))
	}
	slices.SortFunc(plugins, func(a, b procStat) int { return strings.Compare(a.name, b.name) })
	out.procs = append(out.procs, plugins...)
	return out
}

func moreFDs(cur, base sample) bool {
	for _, p := range cur.procs {
		if b, ok := find(base, p.pid); ok && p.fds > b.fds {
			return true
		}
	}
	return false
}

func sameFDs(a, b sample) bool {
	if len(a.procs) != len(b.procs) {
		return false
	}
	for i := range a.procs {
		if a.procs[i].pid != b.procs[i].pid || a.procs[i].fds != b.procs[i].fds {
			return false
		}
	}
	return true
}

func find(s sample, pid int) (procStat, bool) {
	for _, p := range s.procs {
		if p.pid == pid {
			return p, true
		}
	}
	return procStat{}, false
}

// stat reads Threads and VmRSS from /proc/<pid>/status and counts
// /proc/<pid>/fd.
func stat(pid int) (procStat, error) {
	st := procStat{pid: pid}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, err
	}
	for _, l := range strings.Split(string(status), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "Threads:":
			st.threads, _ = strconv.Atoi(f[1])
		case "VmRSS:":
			kb, _ := strconv.ParseFloat(f[1], 64)
			st.rssMiB = kb / 1024
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return st, err
	}
	st.fds = len(fds)
	return st, nil
}

// rssLimit is the RSS growth allowed for a process that had base MiB.
func rssLimit(base float64) float64 {
	return math.Max(minRSSGrowthMiB, base*maxRSSGrowthFrac)
}

// checkGrowth compares the last sample with the first: the same processes
// (a plugin restarted mid-run would have a new PID), no stray children, and
// growth within the limits. It returns each process's RSS limit.
func checkGrowth(t *testing.T, samples []sample) map[int]float64 {
	t.Helper()
	base, last := samples[0], samples[len(samples)-1]
	limits := map[int]float64{}
	for _, b := range base.procs {
		limits[b.pid] = rssLimit(b.rssMiB)
		p, ok := find(last, b.pid)
		if !ok {
			t.Errorf("%s (pid %d) is gone by the end of the run: it crashed or was restarted", b.name, b.pid)
			continue
		}
		if d := p.fds - b.fds; d > maxFDGrowth {
			t.Errorf("%s: open descriptors grew from %d to %d (limit +%d)", b.name, b.fds, p.fds, maxFDGrowth)
		}
		if d := p.threads - b.threads; d > maxThreadGrowth {
			t.Errorf("%s: threads grew from %d to %d (limit +%d)", b.name, b.threads, p.threads, maxThreadGrowth)
		}
		if d := p.rssMiB - b.rssMiB; d > limits[b.pid] {
			t.Errorf("%s: RSS grew from %.1f to %.1f MiB (limit +%.1f MiB)", b.name, b.rssMiB, p.rssMiB, limits[b.pid])
		}
	}
	for _, p := range last.procs {
		if _, ok := find(base, p.pid); !ok {
			t.Errorf("%s (pid %d) appeared during the run: a plugin was restarted", p.name, p.pid)
		}
	}
	if last.strays > 0 {
		t.Errorf("%d processes started by the plugins are still there after the run", last.strays)
	}
	return limits
}

// report writes the figures as Markdown to the test log and, when
// YAGENT_SOAK_OUT is set, to that file.
func report(t *testing.T, s *server, samples []sample, limits map[int]float64, total int, elapsed time.Duration) {
	t.Helper()
	var b strings.Builder
	calls := s.calls.Load() - warmUp
	fmt.Fprintf(&b, "## Soak: %s mixed calls through one `yagent serve` over %s\n\n", thousands(total), s.front)
	if s.front == "http" {
		fmt.Fprintf(&b, "`YAGENT_SOAK_FRONT=http`: `serve --http 127.0.0.1:0`, one Streamable HTTP session per worker (%d sessions).\n\n", inFlight)
	}
	fmt.Fprintf(&b, "`YAGENT_SOAK=1 go test ./test/soak` (`make soak`): after %d warm-up calls, %s calls from the Go MCP SDK's client "+
		"to one `bin/yagent serve` (profile `coder`), %d in flight. Of every 20 calls: 5 `read_file` of 2 KB files, "+
		"4 `search_replace_in_file`, 3 `write_file`, 4 `run_bash` `echo`, 3 `think`, and 1 that must fail "+
		"(`read_file` of a missing file → `not_found`, or an edit of absent text → `search_not_found`). "+
		"The host starts with an empty spec cache, so every plugin is launched to describe itself; "+
		"those the mix never calls (browser, search) stay idle and serve as a baseline.\n\n",
		warmUp, thousands(int(calls)), inFlight)
	fmt.Fprintf(&b, "Result: %s calls in %.1f s (%.0f calls/s); **%d unexpected failures** (warm-up included); %d refusals, each with the code meant; "+
		"every file as the calls left it; plugin processes kept their PIDs (none restarted); %d stray child processes at the end.\n\n",
		thousands(int(calls)), elapsed.Seconds(), float64(calls)/elapsed.Seconds(), s.failures.Load(), s.refusals.Load(), samples[len(samples)-1].strays)
	fmt.Fprintf(&b, "Growth limits from the sample after the warm-up to the last: open descriptors +%d, threads +%d "+
		"(the host exposes no goroutine count; OS threads stand in), RSS +%.0f MiB or +%.0f%%, whichever is larger. "+
		"A descriptor leaked per call shows as hundreds; a leak of less than about 6 KiB per call "+
		"(a parked goroutine per call, say) stays within the RSS limit and this run cannot see it.\n\n",
		maxFDGrowth, maxThreadGrowth, minRSSGrowthMiB, maxRSSGrowthFrac*100)

	b.WriteString("| process | measure |")
	for _, sm := range samples {
		fmt.Fprintf(&b, " %s |", sm.label)
	}
	b.WriteString(" growth | limit |\n|---|---|")
	for range samples {
		b.WriteString("---:|")
	}
	b.WriteString("---:|---:|\n")
	base, last := samples[0], samples[len(samples)-1]
	for _, p := range base.procs {
		l, _ := find(last, p.pid)
		rows := []struct {
			measure string
			val     func(procStat) float64
			limit   string
		}{
			{"threads", func(q procStat) float64 { return float64(q.threads) }, fmt.Sprintf("+%d", maxThreadGrowth)},
			{"open fds", func(q procStat) float64 { return float64(q.fds) }, fmt.Sprintf("+%d", maxFDGrowth)},
			{"RSS MiB", func(q procStat) float64 { return q.rssMiB }, fmt.Sprintf("+%.1f", limits[p.pid])},
		}
		for _, r := range rows {
			fmt.Fprintf(&b, "| %s | %s |", p.name, r.measure)
			for _, sm := range samples {
				q, _ := find(sm, p.pid)
				fmt.Fprintf(&b, " %s |", fig(r.val(q)))
			}
			fmt.Fprintf(&b, " %+.1f | %s |\n", r.val(l)-r.val(p), r.limit)
		}
	}

	b.WriteString("\n| tool | calls | median ms | p99 ms |\n|---|---:|---:|---:|\n")
	s.lat.mu.Lock()
	tools := make([]string, 0, len(s.lat.by))
	for tool := range s.lat.by {
		tools = append(tools, tool)
	}
	slices.Sort(tools)
	for _, tool := range tools {
		d := slices.Clone(s.lat.by[tool])
		slices.Sort(d)
		fmt.Fprintf(&b, "| %s | %d | %.2f | %.2f |\n", tool, len(d),
			float64(d[len(d)/2])/1e6, float64(d[len(d)*99/100])/1e6)
	}
	s.lat.mu.Unlock()

	t.Log("\n" + b.String())
	if out := os.Getenv("YAGENT_SOAK_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Errorf("write %s: %v", out, err)
		}
	}
}

func fig(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
