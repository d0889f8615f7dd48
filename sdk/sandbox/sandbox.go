package sandbox

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/yagent/yagent/sdk/sandbox/execwatch"
)

// Policy is what the processes of one command may touch.
type Policy struct {
	// Workspace is read and written (absolute, resolved).
	Workspace string
	// Read are further roots that may be read: read roots, session
	// approvals, the profile's sandbox.read (absolute, resolved).
	Read []string
	// Write are further roots that may be read and written: the profile's
	// sandbox.write, the admin's word. A path that does not exist yet gives
	// create rights on its nearest existing ancestor (Started.Widened names
	// it).
	Write []string
	// Granted are the paths an ask approved this call to write (absolute,
	// resolved by the host): each opens what JudgeGrant says, and nothing
	// when it says why not (a kernel filesystem, a home folder, a symlink
	// put on the way since). Started.Unopened says which and why.
	Granted []string
	// Network false puts the command in an empty network namespace
	// (loopback only), or in NetNS when set.
	Network bool
	// NetNS is a path to the network namespace a command without Network
	// enters instead of the empty one: the session's, whose only way out
	// is the host's egress proxy (sandbox.network: proxy). A command that
	// cannot enter it is not started.
	NetNS string
	// netMissing says why the network is not cut where the profile wants
	// it cut: under sandbox.network: proxy without a namespace from the
	// host, the proxy variables alone.
	netMissing string
	// Exec makes every execve of the tree wait for the plugin's verdict
	// (execwatch.Supervise's judge).
	Exec bool
	// UnixSockets are socket files (absolute, resolved) the profile's
	// sandbox.unix_sockets lets commands connect to beyond those MayConnect
	// allows anyway.
	UnixSockets []string
	// Supervise, when set, receives the listener of the command's seccomp
	// filter before the command starts, and owns it: the tree's execs (when
	// Exec), its calls refused for a setuid or setgid mode and, under the
	// socket rules (Started.Applied.Sockets), its connects wait for its
	// answers, so it must already run when Start forks. proxy, when not
	// nil, makes the tree's connects to abstract sockets inside its
	// sandbox (execwatch.Supervision's Proxy). Without Supervise the
	// kernel refuses the set-id calls itself, unreported, connects are not
	// judged, and when Exec, Started.Listener holds the listener.
	Supervise func(listener *os.File, proxy execwatch.Proxy)
	// Env is the command's environment: TMPDIR, HOME, GOCACHE, GOMODCACHE,
	// npm_config_cache, PIP_CACHE_DIR, CARGO_HOME and the like are read
	// from it, not from the plugin's own.
	Env []string
	// Tmp is the session's own temp folder (sdk.TempFolder.Dir: absolute,
	// resolved, made by the host): read and written like the temp
	// folders.
	Tmp string
	// TmpOver are the machine's temp folders (sdk.TempFolder.Over: of
	// /tmp, /var/tmp and /dev/shm) that Tmp is bound over in the
	// command's mount namespace: the command finds Tmp at each, and the
	// machine's own folder there (its files, its sockets) not at all.
	// Without the mount namespace nothing is bound (Started.Applied says
	// MountNS false). The bind sits in the kept namespace of the session
	// (one per temp folder and set of paths bound back under /run).
	TmpOver []string
	// Pids and MemoryMB are the bounds of the command's tree (the profile's
	// sandbox.pids and sandbox.memory_mb; 0 for none): the most processes
	// and threads it may hold at once, and the most memory, in MiB. Start
	// does not set them: the command's cgroup does (package cgroup, the
	// caller's, joined through Join); they are here to be named when the
	// tree runs into one.
	Pids, MemoryMB int
	// TmpSizeMB is the size of the session temp folder, in MiB
	// (sandbox.tmp_size_mb); 0 gives it no size of its own.
	TmpSizeMB int
	// Join, when set, runs on the thread that starts the command, before
	// any layer is applied to it, and the func it returns runs right
	// after the fork: it puts that thread into the command's cgroup v1
	// groups (cgroup.Group.JoinThread), so that the command is born in
	// them, as it is born in its cgroup v2 (CLONE_INTO_CGROUP). An error
	// fails the start.
	Join func() (leave func(), err error)
}

// Layers says which kernel layers a Start applies here.
type Layers struct {
	// LandlockABI is the Landlock ABI version, 0 when Landlock is missing.
	LandlockABI int
	// Seccomp says seccomp user notification works (the exec listener)
	// or, in Started.Applied, that the command runs under the seccomp
	// filter: no setuid or setgid mode, no io_uring, and with
	// Policy.Exec, every exec judged.
	Seccomp bool
	// CapDrop says capabilities can be dropped (always, on Linux).
	CapDrop bool
	// MountNS says a private mount namespace can be made (hiding /run).
	MountNS bool
	// NetNS says an empty network namespace can be made.
	NetNS bool
	// Sockets says, in Started.Applied, that the command's connects to
	// unix sockets are judged (MayConnect) and it cannot make a unix
	// datagram socket: the seccomp filter's socket rules, with a
	// supervisor.
	Sockets bool
	// Missing names each missing layer with why and what to do about it.
	Missing map[string]string
}

// Layer names, the keys of Layers.Missing.
const (
	LayerLandlock = "landlock"
	LayerSeccomp  = "seccomp"
	LayerCaps     = "capabilities"
	LayerMountNS  = "mount-namespace"
	LayerNetNS    = "network-namespace"
	LayerCgroup   = "cgroup"
)

// Started is what Start applied to one command.
type Started struct {
	// Listener is the seccomp notification descriptor of the command's
	// tree (execwatch.Supervise reads it); nil unless Policy.Exec without
	// Policy.Supervise, and the layer is there. The caller owns it.
	Listener *os.File
	// Widened are the existing ancestors that got create rights because a
	// write path did not exist yet.
	Widened []string
	// Unopened are write paths left closed, with why: one that did not
	// exist and whose nearest existing folder is "/" or holds a home
	// folder or the private files of /etc (opening it would open those),
	// and each granted path JudgeGrant refused.
	Unopened []Unopened
	// Applied are the layers the command runs under.
	Applied Layers

	// proxy makes the tree's abstract connects from the starting thread.
	proxy *execwatch.ThreadProxy
}

// Probe reports the layers this kernel offers, once per process.
func Probe() Layers {
	return probe()
}

// testLayersEnv names, in a test build only, the variable whose value
// "none" makes Probe report every layer missing and Start apply none, as
// on a machine without them: `go build -ldflags "-X
// github.com/yagent/yagent/sdk/sandbox.testLayersEnv=NAME"`. A release
// build leaves it empty and reads no variable, so nothing in the
// environment can take a layer away.
var testLayersEnv string

// layersReportedNone says a test build was told to play a machine without
// the layers.
func layersReportedNone() bool {
	return testLayersEnv != "" && os.Getenv(testLayersEnv) == "none"
}

// noLayers is a machine without any of the layers: system names it, why
// says what that means for it.
func noLayers(system, why string) Layers {
	l := Layers{Missing: map[string]string{}}
	for layer, what := range map[string]string{
		LayerLandlock: "Landlock",
		LayerSeccomp:  "seccomp user notification",
		LayerCaps:     "Linux capabilities to drop",
		LayerMountNS:  "mount namespaces",
		LayerNetNS:    "network namespaces",
	} {
		l.Missing[layer] = fmt.Sprintf("%s has no %s%s", system, what, why)
	}
	return l
}

// Start starts cmd, not yet started, inside p. cmd.SysProcAttr may already
// hold Setpgid, Setsid, Setctty or a cgroup; Start keeps them.
func Start(cmd *exec.Cmd, p Policy) (*Started, error) {
	return start(cmd, p)
}

// ForgetTmp lets go of what the sandbox keeps for the session temp folder
// dir (its kept mount namespace): the plugin calls it when the session
// ends. Commands still running in the namespace keep it.
func ForgetTmp(dir string) {
	if dir != "" {
		forgetTmp(dir)
	}
}
