package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yagent/yagent/internal/sessiontmp"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox"
	"github.com/yagent/yagent/sdk/sandbox/execwatch"
)

// confinement is what a task's processes run under: the policy its
// Landlock rules came from (to explain a refusal), and the calls in flight
// that can carry the host's question about an exec of its tree.
type confinement struct {
	policy   sandbox.Policy
	widened  []string
	unopened []sandbox.Unopened

	asks atomic.Int32 // execs waiting for the host's answer

	setIDs    atomic.Int32 // set-id modes the filter refused
	uringSaid atomic.Bool  // the output says io_uring is off
	connects  atomic.Int32 // connects to unix sockets refused
	dgram     atomic.Bool  // a unix datagram socket was refused

	mu      sync.Mutex
	callers []context.Context // in flight, oldest first
	origin  context.Context   // the starting call's values, never cancelled
}

// attach makes ctx, a call in flight on the task, the one an exec asks
// through until the returned func detaches it.
func (c *confinement) attach(ctx context.Context) func() {
	if c == nil {
		return func() {}
	}
	c.mu.Lock()
	c.callers = append(c.callers, ctx)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if i := slices.Index(c.callers, ctx); i >= 0 {
			c.callers = slices.Delete(c.callers, i, i+1)
		}
	}
}

// askPoll is how often a call that should yield looks again whether an
// exec of its task still waits for the host.
const askPoll = 10 * time.Millisecond

// asking reports whether an exec of the task waits for the host's answer.
func (c *confinement) asking() bool { return c != nil && c.asks.Load() > 0 }

// caller is the newest call in flight on the task; with none, the starting
// call's values, which the host answers only for what needs nobody asked.
func (c *confinement) caller() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.callers) - 1; i >= 0; i-- {
		if c.callers[i].Err() == nil {
			return c.callers[i]
		}
	}
	return c.origin
}

// plan is what the call's sandbox asks of t's processes, nil when the
// host sent none or sandbox: off (they start as before): the seccomp
// filter's supervisor, which says in the output which setuid or setgid
// mode it refused and, when the profile has ask or deny exec rules, judges
// every exec of the tree. It refuses a required sandbox where a kernel
// layer the command needs is missing, before anything is made for the
// command.
func (m *Manager) plan(ctx context.Context, t *task, env []string) (*confinement, error) {
	p, mode, ok := sandbox.ForCall(ctx, env)
	if !ok {
		return nil, nil
	}
	progs := watched(sdk.CallFrom(ctx).Sandbox.Programs, t.mode == ModePTY)
	p.Exec = len(progs) > 0
	if err := sandbox.CheckRequired(mode, p); err != nil {
		return nil, err
	}
	c := &confinement{policy: p, origin: context.WithoutCancel(ctx)}
	var match *execwatch.Matcher
	if c.policy.Exec {
		match = execwatch.NewMatcher(progs)
	}
	c.policy.Supervise = m.supervisor(t, c, match)
	return c, nil
}

// confine starts cmd inside c, the plan of its call: Landlock rules,
// dropped capabilities, private /run and the seccomp filter with its
// supervisor. With no plan it starts as before.
func (m *Manager) confine(t *task, cmd *exec.Cmd, c *confinement) error {
	if c == nil {
		return cmd.Start()
	}
	st, err := sandbox.Start(cmd, c.policy)
	if err != nil {
		return err
	}
	c.widened, c.unopened = st.Widened, st.Unopened
	t.sb = c
	return nil
}

// watched are the rule programs an exec of the command's tree may be: all
// of them under a terminal; without one (pipe and background commands,
// whose stdin is /dev/null and who have no controlling terminal), not
// those whose rules only ask before a REPL, which needs a terminal.
func watched(progs []sdk.ExecProgram, terminal bool) []sdk.ExecProgram {
	if terminal {
		return progs
	}
	var out []sdk.ExecProgram
	for _, p := range progs {
		if !p.Interactive {
			out = append(out, p)
		}
	}
	return out
}

// startError is the tool error of a command that could not start.
func startError(workspace string, err error) error {
	var req *sandbox.RequiredError
	if errors.As(err, &req) {
		return sdk.Errorf(sdk.CodeDenied, "%v", err)
	}
	return sdk.Errorf(sdk.CodeToolFailed, "could not start the command in %s: %v", workspace, err)
}

// supervisor returns what starts the supervision of t's tree on the
// listener: it says in the output which calls the filter refused and, with
// match (exec rules), judges the tree's execs. The first exec, the shell
// the plugin itself starts, is answered without a judge.
func (m *Manager) supervisor(t *task, c *confinement, match *execwatch.Matcher) func(*os.File, execwatch.Proxy) {
	return func(listener *os.File, proxy execwatch.Proxy) {
		var judge execwatch.Judge
		if match != nil {
			judge = func(_ context.Context, e execwatch.Exec) execwatch.Verdict {
				if len(match.Match(e)) == 0 {
					return execwatch.Verdict{Allow: true}
				}
				return m.askExec(t, c, e)
			}
		}
		s := execwatch.Supervision{
			Judge:   judge,
			Refused: func(r execwatch.Refusal) { c.refused(t, r) },
			Connect: func(_ context.Context, conn execwatch.Connect) execwatch.Verdict {
				return execwatch.Verdict{Allow: c.policy.MayConnectFile(conn.Path, conn.Dev, conn.Ino)}
			},
			Proxy:   proxy,
			Exposed: c.policy.UnixSockets,
		}
		go func() {
			if err := execwatch.Supervise(context.Background(), listener, s); err != nil {
				m.opts.Logger.Warn("shell: the exec supervisor stopped", "task", t.id, "err", err)
			}
		}()
	}
}

// execAskTimeout bounds the host's answer on one exec; an ask waits for
// the user within it.
var execAskTimeout = 10 * time.Minute

// askExec puts an exec that may be a rule's program to the host, which
// applies the profile's exec rules (and asks where one says ask). Anything
// but an approval fails the exec, and the command's output says why.
func (m *Manager) askExec(t *task, c *confinement, e execwatch.Exec) execwatch.Verdict {
	c.asks.Add(1)
	defer c.asks.Add(-1)
	ctx := c.caller()
	ctx, cancel := context.WithTimeout(ctx, execAskTimeout)
	defer cancel()
	prog := e.Path
	req := sdk.ApprovalRequest{
		Kind:         sdk.ApprovalExec,
		TaskID:       t.id,
		Program:      prog,
		Argv:         e.Argv,
		Interpreters: e.Interpreters,
		Terminal:     e.Terminal,
		Dir:          procDir(e.Pid),
		Reason:       fmt.Sprintf("task %s is about to run %s", t.id, execLine(e)),
	}
	if e.Unidentified != "" {
		req.Program = ""
		req.Reason += " (" + e.Unidentified + ")"
	}
	resp, err := sdk.HostFrom(ctx).RequestApproval(ctx, req)
	if err == nil && resp.Approved {
		return execwatch.Verdict{Allow: true}
	}
	why := resp.Reason
	if err != nil {
		why = err.Error()
	}
	if why == "" {
		why = "the host did not approve it"
	}
	line := fmt.Sprintf(notePrefix+"the exec of %s was refused (Permission denied): %s", execLine(e), why)
	t.writeNote(line)
	return execwatch.Verdict{}
}

// maxSetIDNotes bounds the refused set-id modes a task's output names one
// by one (a chmod -R u+s or an archive's members could be thousands).
const maxSetIDNotes = 3

// refused says in t's output, before the call fails, why the sandbox
// failed a call of its tree: a setuid or setgid mode, or io_uring_setup
// (once).
func (c *confinement) refused(t *task, r execwatch.Refusal) {
	switch r.Call {
	case "connect":
		c.refusedConnect(t, r)
		return
	case "socket", "socketpair":
		// Said with the receipt of a command that failed: most programs
		// that make one only try the system log, which is not there.
		c.dgram.Store(true)
		return
	}
	if !r.SetID() {
		if c.uringSaid.CompareAndSwap(false, true) {
			t.writeNote(notePrefix + "io_uring is off for commands: io_uring_setup fails with ENOSYS (Function not implemented), as on a kernel " +
				"without it, since a ring's requests would create files with modes the sandbox cannot check. Programs that use io_uring " +
				"fall back to ordinary system calls; one that cannot does not run here.")
		}
		return
	}
	switch n := c.setIDs.Add(1); {
	case n == 1:
		t.writeNote(setIDNote(r))
	case n <= maxSetIDNotes:
		t.writeNote(notePrefix + setIDCall(r) + " was refused too (Operation not permitted).")
	case n == maxSetIDNotes+1:
		t.writeNote(notePrefix + "further setuid or setgid modes the command asked for were refused too (Operation not permitted).")
	}
}

// refusedConnect says in t's output that the sandbox refused a connect to
// a unix socket, why, and what works: the first few by name.
func (c *confinement) refusedConnect(t *task, r execwatch.Refusal) {
	switch n := c.connects.Add(1); {
	case n == 1 && strings.HasPrefix(r.Path, "@"):
		t.writeNote(fmt.Sprintf(notePrefix+"the connect to the abstract unix socket %s was refused (Operation not permitted): commands connect only "+
			"to abstract sockets their own command made.", r.Path))
	case n == 1:
		t.writeNote(fmt.Sprintf(notePrefix+"the connect to the unix socket %s was refused (Permission denied): commands connect only to "+
			"sockets in the workspace, the session's temp folder and the paths sandbox.write or an approval opens, and to those the profile's "+
			"sandbox.unix_sockets names. A socket in the shared /tmp or the home folder (a terminal multiplexer's, an agent's) is another "+
			"program's door out of the sandbox. If the command needs this one, ask the user to add it to sandbox.unix_sockets.", r.Path))
	case n <= maxSetIDNotes:
		t.writeNote(fmt.Sprintf(notePrefix+"the connect to %s was refused too.", r.Path))
	case n == maxSetIDNotes+1:
		t.writeNote(notePrefix + "further connects to unix sockets were refused too.")
	}
}

// setIDNote says that the sandbox refused r's setuid or setgid mode, why,
// and what works instead.
func setIDNote(r execwatch.Refusal) string {
	return notePrefix + setIDCall(r) + " was refused (Operation not permitted): commands may not set the setuid or setgid bit " +
		"(modes 4000 and 2000, u+s, g+s), since a set-id program runs with its owner's rights for any user, after the command and outside the sandbox. " +
		"Plain modes work: chmod 755, chmod +x, chmod -R u+rwX, install -m 755."
}

// setIDCall names r's call, file and mode.
func setIDCall(r execwatch.Refusal) string {
	file := r.Path
	if file == "" {
		file = "a file"
	}
	to := "with"
	if strings.Contains(r.Call, "chmod") {
		to = "to"
	}
	return fmt.Sprintf("the %s of %s %s mode %o", r.Call, file, to, r.Mode)
}

// procDir is the working folder of process pid, "" when unknown: the
// process waits in its exec, so it is still there to be read.
func procDir(pid int) string {
	d, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd"))
	if err != nil || strings.HasSuffix(d, " (deleted)") {
		return ""
	}
	return d
}

// execLine shows an exec as its program and first arguments.
func execLine(e execwatch.Exec) string {
	prog := e.Path
	if prog == "" {
		prog = "an unidentified program"
	}
	args := e.Argv
	if len(args) > 0 {
		args = args[1:]
	}
	s := prog
	const maxArgs = 6
	for i, a := range args {
		if i == maxArgs {
			s += " …"
			break
		}
		if len(a) > 60 {
			a = a[:60] + "…"
		}
		s += " " + a
	}
	return s
}

// notePrefix starts every line the plugin adds about the sandbox.
const notePrefix = "yagent sandbox: "

// writeNote adds a line of the plugin's own to the task's output, where
// the model reads what the command printed around it.
func (t *task) writeNote(line string) {
	line = "\n" + line + "\n"
	if t.out != nil {
		t.out.Write([]byte(line))
		return
	}
	if t.logPath == "" {
		return
	}
	f, err := os.OpenFile(t.logPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer f.Close()
	f.WriteString(line)
}

// taskSandboxNotes are sandboxNotes for the output of a task read after
// its call: the task keeps the rules it started with (Landlock only
// narrows), so an approval given since does not reach it.
func (t *task) taskSandboxNotes(output string) string {
	note := t.refusalNotes(output)
	if note == "" {
		return ""
	}
	return note + "\n" + notePrefix + "task " + t.id + " keeps the sandbox it started with: an approval given after it started does not widen it. Run the command again in a new run_bash call once the path is approved."
}

// deniedLine finds the lines in which a program reports a refused open.
var deniedLine = regexp.MustCompile(`(?i)permission denied|operation not permitted|read-only file system|errno 13|EACCES|EPERM`)

// pathToken finds absolute paths in such a line: the file a program
// names in its error.
var pathToken = regexp.MustCompile(`(?:^|[\s'"‘“(=:])(/[^\s'"’”:,;)]+)`)

// refusedPaths are the paths a line of a refusal names as refused: the
// one right before or after the "Permission denied" (cat: /x: Permission
// denied; Permission denied: '/x'), else every path but a leading
// program name (/usr/bin/bash: line 1: ...).
func refusedPaths(line string) []string {
	var all, named []string
	for i, m := range pathToken.FindAllStringSubmatchIndex(line, -1) {
		p := line[m[2]:m[3]]
		rest, before := line[m[3]:], line[:m[2]]
		switch {
		case deniedAfter.MatchString(rest), deniedBefore.MatchString(before):
			named = append(named, filepath.Clean(p))
		case i == 0 && m[2] == 0 && strings.HasPrefix(rest, ":"):
			// the program's own name, leading its message
		default:
			all = append(all, filepath.Clean(p))
		}
	}
	if len(named) > 0 {
		return named
	}
	return all
}

// deniedAfter and deniedBefore find the refusal right beside a path.
var (
	deniedAfter  = regexp.MustCompile(`(?i)^['"’”]?:\s*(permission denied|operation not permitted|read-only file system)`)
	deniedBefore = regexp.MustCompile(`(?i)(permission denied|operation not permitted|read-only file system)(:|,)?\s*['"‘“]?$`)
)

// explain says why the task's rules refuse p, "" when they do not.
func (c *confinement) explain(p string) string {
	read, write := c.policy.Permits(p, false), c.policy.Permits(p, true)
	how := "If the command needs it, name the path literally in the command so the user is asked and can approve it, or ask the user to add it to %s in the profile."
	switch {
	case write:
		return ""
	case read && sandbox.KernelFS(p) != "":
		return fmt.Sprintf("yagent sandbox: commands may not write %s: it is %s, and %s. Asking the user will not change that.", p, sandbox.KernelFS(p), sandbox.PseudoWhy)
	case read:
		return fmt.Sprintf("yagent sandbox: commands may not write %s: they write only the workspace, the temp folder, the toolchain caches and approved paths. "+how, p, "sandbox.write")
	}
	if _, err := os.Lstat(p); err != nil {
		return fmt.Sprintf("yagent sandbox: commands may not create %s: they write only the workspace, the temp folder, the toolchain caches and approved paths. "+how, p, "sandbox.write")
	}
	return fmt.Sprintf("yagent sandbox: commands may not read %s: it is outside the workspace, the read roots, the toolchain caches and the system folders. "+how, p, "sandbox.read")
}

// maxNotedPaths bounds the paths one receipt explains.
const maxNotedPaths = 4

// sandboxNotes explains what in output the sandbox may have refused: each
// path named in a "Permission denied" line that the task's rules do not
// let it read or write, and the ancestors that got create rights for
// approved paths that did not exist yet. "" when there is nothing to say.
func (t *task) sandboxNotes(output string) string {
	c := t.sb
	if c == nil {
		return ""
	}
	var notes []string
	for _, w := range c.widened {
		notes = append(notes, fmt.Sprintf("yagent sandbox: an approved path did not exist yet, so the command could create files anywhere under %s, its nearest existing folder.", w))
	}
	for _, u := range c.unopened {
		notes = append(notes, fmt.Sprintf("yagent sandbox: %s was approved, but the sandbox keeps it closed to writes: %s. "+
			"Write inside the workspace or the temp folder instead, or ask the user to add it to sandbox.write in the profile.", u.Path, u.Why))
	}
	if r := t.refusalNotes(output); r != "" {
		notes = append(notes, r)
	}
	if c.dgram.Load() && (t.end.kind != endExited || t.end.exitCode != 0) {
		notes = append(notes, dgramNote)
	}
	if b := t.boundNotes(); b != "" {
		notes = append(notes, b)
	}
	if n := t.noSpaceNote(output); n != "" {
		notes = append(notes, n)
	}
	return strings.Join(notes, "\n")
}

// noSpaceNote says, when output tells of a write that found no space and
// the session's temp folder has a size of its own but is not full now
// (the command removed what it wrote, as a failed go build does), what
// that size is: those writes may have gone there.
func (t *task) noSpaceNote(output string) string {
	p := t.sb.policy
	if t.hit.tmpFull || p.TmpSizeMB == 0 || p.Tmp == "" || !strings.Contains(strings.ToLower(output), "no space left on device") {
		return ""
	}
	free, _, ok := sessiontmp.Free(p.Tmp)
	if !ok {
		return ""
	}
	return fmt.Sprintf(notePrefix+"if the writes that found no space went to /tmp, /var/tmp, /dev/shm or $TMPDIR, they ran into the size of "+
		"the session's temp folder (sandbox.tmp_size_mb: %d MiB; %d MiB free now). Write big files in the workspace instead, or ask the user "+
		"to raise sandbox.tmp_size_mb in the profile.", p.TmpSizeMB, free>>20)
}

// dgramNote says why the command could not make a unix datagram socket.
const dgramNote = notePrefix + "the command asked for a unix datagram socket, which the sandbox refuses (Permission denied), since it could " +
	"send to any socket on the machine; the system log is not reachable either. Unix stream and seqpacket sockets, socketpair of those, " +
	"and network sockets work."

// refusalNotes explains each path a "Permission denied" line of output
// names that the task's rules do not cover.
func (t *task) refusalNotes(output string) string {
	c := t.sb
	if c == nil {
		return ""
	}
	var notes []string
	seen := map[string]bool{}
	for _, line := range strings.Split(output, "\n") {
		if len(seen) >= maxNotedPaths || strings.HasPrefix(line, notePrefix) || !deniedLine.MatchString(line) {
			continue
		}
		for _, p := range refusedPaths(line) {
			if seen[p] || len(seen) >= maxNotedPaths || slices.ContainsFunc(c.unopened, func(u sandbox.Unopened) bool { return u.Path == p }) {
				continue
			}
			seen[p] = true
			if note := c.explain(p); note != "" {
				notes = append(notes, note)
			}
		}
	}
	return strings.Join(notes, "\n")
}
