package runner

import (
	"log/slog"
	"os/exec"
	"time"

	"github.com/yagent/yagent/sdk/sandbox/cgroup"
)

// runBashWaitDelay is how long a foreground command's output pipes may stay
// open after the command itself has exited (or after its group was killed)
// before the call stops waiting for them. Processes a command leaves behind
// (`cmd &`, `nohup … &`) keep the pipes open; without this bound the call
// would wait for them, and timeouts and cancels would hit nothing. It is the
// default of Options.WaitDelay; tests set that field instead of this var so
// they can run in parallel.
var runBashWaitDelay = 3 * time.Second

// runBashOutputQuiet is how long the output of a command that has exited
// may stay quiet while processes it left behind hold it open, before the
// call stops waiting for them: `sleep 97 & echo started` answers this long
// after bash exits, not runBashWaitDelay. Output that still flows starts
// the spell again, up to runBashWaitDelay after the exit. It is the default
// of Options.OutputQuiet.
var runBashOutputQuiet = 200 * time.Millisecond

// maxShellOutputBytes is how much of a command's output a shell call keeps:
// the first and the last half, with the bytes in between counted and left
// out. It is the shell's own number, shared with no other budget. It is the
// default of Options.MaxOutputBytes.
var maxShellOutputBytes = 10 << 20

// Defaults of the tool parameters.
const (
	DefaultTimeout     = 10 * time.Minute
	DefaultYield       = 15 * time.Second
	ServerYield        = 2 * time.Second
	DefaultWaitTimeout = 30 * time.Second
	MaxWaitTimeout     = 10 * time.Minute
	DefaultMaxTasks    = 16
)

// Options configure a Manager. The zero value is usable: every zero field
// takes its default.
type Options struct {
	// StateDir is the folder under which session folders (and background
	// logs) live; default DefaultStateDir().
	StateDir string
	// WaitDelay bounds the wait for output pipes once the command has
	// exited; default runBashWaitDelay.
	WaitDelay time.Duration
	// OutputQuiet ends that wait sooner, once the output has been quiet
	// this long; default runBashOutputQuiet, never above WaitDelay.
	OutputQuiet time.Duration
	// MaxOutputBytes caps the output kept per call or task; default
	// maxShellOutputBytes.
	MaxOutputBytes int
	// MaxTasks bounds the tasks (yielded and background) of one session;
	// default DefaultMaxTasks.
	MaxTasks int
	// Shell is the bash binary; default bash from PATH, else /bin/bash.
	Shell string
	// DropEnv names environment variables not passed to commands, such as
	// the plugin handshake's own variables.
	DropEnv []string
	// StdinSettle is how long write_stdin waits for output to go quiet
	// before it returns; default 300 ms.
	StdinSettle time.Duration
	// StdinMaxWait bounds write_stdin's wait for output; default 5 s.
	StdinMaxWait time.Duration
	// PromptQuiet is how long a terminal task must sit silent at a prompt
	// before shell_wait returns early; default 1 s.
	PromptQuiet time.Duration
	// BackgroundSettle is how long run_bash watches a background command
	// before returning, to report one that fails at once; default 300 ms.
	BackgroundSettle time.Duration
	// CancelGrace is how long shell_cancel waits after SIGTERM before it
	// sends SIGKILL to a background task's group; default 2 s.
	CancelGrace time.Duration
	// Logger receives what the model need not see; default slog.Default().
	Logger *slog.Logger
	// NewCgroup makes the cgroup of a command (background: one that
	// outlives its call); default cgroup.New. One that fails leaves
	// commands in their process groups (the fallback), or refuses them
	// under a required sandbox.
	NewCgroup func(background bool) (*cgroup.Group, error)
}

func (o Options) withDefaults() Options {
	if o.WaitDelay <= 0 {
		o.WaitDelay = runBashWaitDelay
	}
	if o.OutputQuiet <= 0 {
		o.OutputQuiet = runBashOutputQuiet
	}
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = maxShellOutputBytes
	}
	if o.MaxTasks <= 0 {
		o.MaxTasks = DefaultMaxTasks
	}
	if o.Shell == "" {
		if p, err := exec.LookPath("bash"); err == nil {
			o.Shell = p
		} else {
			o.Shell = "/bin/bash"
		}
	}
	if o.StdinSettle <= 0 {
		o.StdinSettle = 300 * time.Millisecond
	}
	if o.StdinMaxWait <= 0 {
		o.StdinMaxWait = 5 * time.Second
	}
	if o.PromptQuiet <= 0 {
		o.PromptQuiet = time.Second
	}
	if o.BackgroundSettle <= 0 {
		o.BackgroundSettle = 300 * time.Millisecond
	}
	if o.CancelGrace <= 0 {
		o.CancelGrace = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.NewCgroup == nil {
		o.NewCgroup = cgroup.New
	}
	return o
}
