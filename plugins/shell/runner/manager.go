package runner

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
	"github.com/yagent/yagent/sdk/sandbox"
	"github.com/yagent/yagent/sdk/sandbox/cgroup"
)

// Manager runs the shell plugin's commands and keeps their tasks, per
// session. It is safe for concurrent use.
type Manager struct {
	opts   Options
	groups LiveGroups
	nextID atomic.Int64

	mu       sync.Mutex
	sessions map[string]*sessionTasks
	inflight map[*task]struct{} // foreground commands not yet ended
	// temps are the sessions' own temp folders, as their calls name them:
	// what the sandbox keeps for one is let go when its session ends.
	temps map[string]string

	noCgroup sync.Once // the fallback to process groups is logged once
	noBound  sync.Once // a bound that could not be set is logged once
}

type sessionTasks struct {
	tasks []*task // in start order
}

// New returns a Manager; opts may be the zero value.
func New(opts Options) *Manager {
	return &Manager{
		opts:     opts.withDefaults(),
		sessions: make(map[string]*sessionTasks),
		inflight: make(map[*task]struct{}),
		temps:    make(map[string]string),
	}
}

// noteTemp remembers the temp folder of the call's session.
func (m *Manager) noteTemp(info sdk.CallInfo) {
	if info.Temp == nil || info.Temp.Dir == "" {
		return
	}
	m.mu.Lock()
	m.temps[info.SessionID] = info.Temp.Dir
	m.mu.Unlock()
}

// KillLiveProcessGroups kills the cgroup and the process group of every
// foreground command in flight (calls and yielded tasks) and returns how
// many it reached. Background commands are not touched. The
// plugin calls it on Shutdown; the host does the same with the groups it
// was told about (ReportProcessGroup) when the plugin is dead.
func (m *Manager) KillLiveProcessGroups() int {
	return m.groups.KillAll()
}

// Shutdown cancels every foreground command in flight, kills their
// cgroups and process groups and waits until they have ended or ctx is
// done, then removes the cgroup folders left empty. Background commands
// keep running: they belong to the user.
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	tasks := make([]*task, 0, len(m.inflight))
	for t := range m.inflight {
		tasks = append(tasks, t)
	}
	m.mu.Unlock()
	for _, t := range tasks {
		t.cancel(errStopping)
	}
	m.KillLiveProcessGroups()
	for _, t := range tasks {
		select {
		case <-t.done:
		case <-ctx.Done():
			return fmt.Errorf("shell shutdown: %w", ctx.Err())
		}
	}
	cgroup.Cleanup()
	return nil
}

// EndSession ends what session id holds: its foreground commands in
// flight (a call's, or yielded and waiting on shell_wait) are killed and
// waited for, and its task table is dropped. Its background commands keep
// running, as they would when the plugin stops, but no session lists them
// any more; their output stays in their log files. It is the plugin's
// OnSessionEnd.
func (m *Manager) EndSession(ctx context.Context, id string) error {
	m.mu.Lock()
	var tasks []*task
	for t := range m.inflight { // foreground commands only
		if t.sessionID == id {
			tasks = append(tasks, t)
		}
	}
	delete(m.sessions, id)
	tmp := m.temps[id]
	delete(m.temps, id)
	m.mu.Unlock()
	// Its kept mount namespace goes (its background commands keep theirs
	// while they run); the host removes the folder itself.
	sandbox.ForgetTmp(tmp)
	for _, t := range tasks {
		t.cancel(errSessionEnded)
	}
	for _, t := range tasks {
		select {
		case <-t.done:
		case <-ctx.Done():
			return fmt.Errorf("end session %q: %d foreground commands not yet ended: %w", id, len(tasks), ctx.Err())
		}
	}
	return nil
}

func (m *Manager) newTask(sessionID, command, mode string) *task {
	return &task{
		id:        fmt.Sprintf("sh-%d", m.nextID.Add(1)),
		sessionID: sessionID,
		command:   command,
		mode:      mode,
		started:   time.Now(),
		done:      make(chan struct{}),
	}
}

func (m *Manager) track(t *task) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inflight[t] = struct{}{}
}

func (m *Manager) untrack(t *task) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.inflight, t)
}

// adopt puts t in its session's table, making room by dropping the oldest
// ended task if the table is full. It reports false when every slot holds
// a running task.
func (m *Manager) adopt(t *task) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[t.sessionID]
	if s == nil {
		s = &sessionTasks{}
		m.sessions[t.sessionID] = s
	}
	if len(s.tasks) >= m.opts.MaxTasks {
		i := slices.IndexFunc(s.tasks, (*task).finished)
		if i < 0 {
			return false
		}
		s.tasks = slices.Delete(s.tasks, i, i+1)
	}
	s.tasks = append(s.tasks, t)
	return true
}

// release drops t from its session's table once its end was reported.
func (m *Manager) release(t *task) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[t.sessionID]
	if s == nil {
		return
	}
	s.tasks = slices.DeleteFunc(s.tasks, func(x *task) bool { return x == t })
	if len(s.tasks) == 0 {
		delete(m.sessions, t.sessionID)
	}
}

// lookup finds a task of the call's session.
func (m *Manager) lookup(ctx context.Context, id string) (*task, error) {
	sid := sdk.CallFrom(ctx).SessionID
	id = strings.TrimSpace(id)
	if id == "" {
		return nil, sdk.Errorf(sdk.CodeInvalidInput, "task_id is empty: pass the id run_bash returned (shell_tasks lists this session's tasks)")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.sessions[sid]; s != nil {
		for _, t := range s.tasks {
			if t.id == id {
				return t, nil
			}
		}
	}
	return nil, sdk.Errorf(sdk.CodeNotFound, "no shell task %q in this session: it may have ended and been reported already. shell_tasks lists the tasks this session has", id)
}

func (m *Manager) sessionTasks(sid string) []*task {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.sessions[sid]; s != nil {
		return slices.Clone(s.tasks)
	}
	return nil
}

// report tells the host that a process group started or ended. ctx keeps
// the call's values (CallInfo, Host) even after the call has returned.
func (m *Manager) report(ctx context.Context, pgid int, live bool) {
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := sdk.HostFrom(ctx).ReportProcessGroup(rctx, pgid, live); err != nil {
		m.opts.Logger.Warn("shell: reporting a process group to the host failed", "pgid", pgid, "live", live, "err", err)
	}
}

// env is the environment of a command of the call ctx belongs to: the
// plugin's, less the variables the plugin handshake uses, with TERM set
// for a terminal and TMPDIR the session's temp folder as the command
// sees it.
func (m *Manager) env(ctx context.Context, terminal bool) []string {
	drop := append([]string{
		"PLUGIN_MIN_PORT", "PLUGIN_MAX_PORT", "PLUGIN_PROTOCOL_VERSIONS", "PLUGIN_CLIENT_CERT",
		"PLUGIN_MULTIPLEX_GRPC", "PLUGIN_UNIX_SOCKET_DIR", "PLUGIN_UNIX_SOCKET_GROUP",
	}, m.opts.DropEnv...)
	var env []string
	hasTerm := false
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(drop, name) {
			continue
		}
		if name == "TERM" {
			if terminal && (kv == "TERM=" || kv == "TERM=dumb") {
				continue
			}
			hasTerm = true
		}
		env = append(env, kv)
	}
	if terminal && !hasTerm {
		env = append(env, "TERM=xterm-256color")
	}
	if d := tmpdirFor(ctx); d != "" {
		env = append(slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }), "TMPDIR="+d)
	}
	if proxy := sandbox.ProxyEnv(sdk.CallFrom(ctx).Sandbox); proxy != nil {
		// The session's proxy, in place of any the plugin was given.
		set := map[string]bool{}
		for _, kv := range proxy {
			name, _, _ := strings.Cut(kv, "=")
			set[name] = true
		}
		env = append(slices.DeleteFunc(env, func(kv string) bool {
			name, _, _ := strings.Cut(kv, "=")
			return set[name]
		}), proxy...)
	}
	return env
}

// tmpdirFor is TMPDIR for the commands of the call ctx belongs to: /tmp
// where the sandbox binds the session's temp folder over it, the folder
// itself where nothing is bound (the sandbox off, no mount namespace
// here), "" when the host keeps none for the session.
func tmpdirFor(ctx context.Context) string {
	info := sdk.CallFrom(ctx)
	if info.Temp == nil || info.Temp.Dir == "" {
		return ""
	}
	if sb := info.Sandbox; sb != nil && policy.SandboxMode(sb.Mode) != policy.SandboxOff && sandbox.Probe().MountNS {
		return info.Temp.TMPDIR()
	}
	return info.Temp.Dir
}
