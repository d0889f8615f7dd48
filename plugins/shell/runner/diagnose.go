package runner

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The diagnoses of a command still running.
const (
	DiagPrompt  = "interactive_prompt"
	DiagStopped = "stopped_on_terminal"
	DiagNetwork = "network_blocked"
	DiagServer  = "server"
	DiagWorking = "working"
)

// diagnosis says why a command is still running and what to do next.
type diagnosis struct {
	Kind string
	Text string
}

var (
	promptLine = regexp.MustCompile(`(?i)(password|passphrase|passcode|token|username|login|\[y/n\]|\(y/n\)|\[yes/no\]|\(yes/no\)|continue\?|proceed\?|overwrite\?|` +
		`[?:>\]#$]\s*)$`)
	networkLine = regexp.MustCompile(`(?i)(could not resolve host|temporary failure in name resolution|name or service not known|` +
		`network is unreachable|no route to host|connection timed out|operation timed out|connection refused|` +
		`etimedout|econnrefused|enotfound|eai_again|econnreset|getaddrinfo|i/o timeout|dial tcp|proxyconnect|` +
		`tls handshake timeout|failed to connect|unable to connect|retrying in|retry attempt)`)
	serverLine = regexp.MustCompile(`(?i)(listening on|listening at|now listening|serving http|serving on|server running|` +
		`server started|started server|running on https?://|local:\s+https?://|ready in \d|watching for (file )?changes|` +
		`compiled successfully|press ctrl\+c to (stop|quit))`)
)

// diagnose looks at a running command and the end of its output.
func diagnose(t *task, tail string) diagnosis {
	if t.pgid > 0 && groupStopped(t.pgid) {
		return diagnosis{DiagStopped, "It was stopped by the system (state T), most likely because it tried to read from a terminal it does not own. " +
			"Stop it with shell_cancel and run it again with mode=pty."}
	}
	last := lastLine(tail)
	if !strings.HasSuffix(tail, "\n") && last != "" && promptLine.MatchString(last) {
		if t.mode == ModePTY {
			return diagnosis{DiagPrompt, fmt.Sprintf("It looks like it is waiting for input at a prompt (%q). "+
				"Answer with write_stdin {task_id, input, keys:[\"enter\"]}, or stop it with shell_cancel.", last)}
		}
		return diagnosis{DiagPrompt, fmt.Sprintf("It looks like it is waiting for input at a prompt (%q), but it runs without a terminal and its stdin is empty. "+
			"Stop it with shell_cancel, then pass the answer without a prompt (a flag such as --yes, or input piped into the command) or run it again with mode=pty and answer with write_stdin.", last)}
	}
	if m := networkLine.FindString(lastLines(tail, 20)); m != "" {
		return diagnosis{DiagNetwork, fmt.Sprintf("It looks blocked on the network (its output says %q); this machine may have no route to that host. "+
			"Rather than waiting, stop it with shell_cancel and work with what is available offline.", m)}
	}
	if t.server || serverLine.MatchString(lastLines(tail, 40)) {
		return diagnosis{DiagServer, fmt.Sprintf("It looks like a server or watcher that runs until it is stopped. "+
			"It stays a task of this session, killed at its timeout (%s after it started) or when the plugin stops. "+
			"Read its output with shell_wait and stop it with shell_cancel; to keep a service running beyond that, stop it and start it again with is_background=true.",
			t.timeout.Round(time.Second))}
	}
	return diagnosis{DiagWorking, fmt.Sprintf("It is still working (%d bytes of output so far). Wait for it with shell_wait, or stop it with shell_cancel.", t.outputBytes())}
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

func lastLines(s string, n int) string {
	end := len(s)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			n--
			if n < 0 {
				return s[i+1 : end]
			}
		}
	}
	return s
}

// groupStopped reports whether a process of group pgid is stopped (state
// T), as one that read from a terminal it does not own is.
func groupStopped(pgid int) bool {
	for _, p := range groupProcesses(pgid) {
		if p.state == 'T' {
			return true
		}
	}
	return false
}

type procInfo struct {
	pid   int
	state byte
}

// groupProcesses lists the processes of group pgid from /proc; nil where
// /proc is not there.
func groupProcesses(pgid int) []procInfo {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procInfo
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, group, ok := procStat(pid)
		if ok && group == pgid {
			out = append(out, procInfo{pid: pid, state: state})
		}
	}
	return out
}

// procStat reads a process's state and process group from /proc/pid/stat.
func procStat(pid int) (state byte, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// The command name is in parentheses and may hold spaces: fields start
	// after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	g, err := strconv.Atoi(f[2])
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], g, true
}
