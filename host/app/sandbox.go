package app

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/yagent/yagent/host/config"
	"github.com/yagent/yagent/internal/sessiontmp"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk/sandbox"
	"github.com/yagent/yagent/sdk/sandbox/cgroup"
)

// SandboxLayer is one kernel layer of the sandbox as this machine has it.
type SandboxLayer struct {
	// Key is the layer's name in sandbox.Layers.Missing (sandbox.LayerCgroup
	// for the cgroup).
	Key string
	// Name is what doctor calls it: "Landlock ABI 7", "cgroup v2 /sys/...".
	Name string
	// Active says commands run under it.
	Active bool
	// Why says why a missing layer is missing and what to do about it.
	Why string
	// Means says what commands lose without it; Short says it in a few
	// words, for the start-up line.
	Means, Short string
	// Needed says the profile uses the layer: the network namespace only
	// when sandbox.network is off or proxy.
	Needed bool
}

// ProbeSandbox reports the layers this kernel offers and the cgroup v2
// folder command cgroups go under (or why there is none).
func ProbeSandbox() (sandbox.Layers, string, error) {
	root, err := cgroup.Root()
	return sandbox.Probe(), root, err
}

// SandboxLayers describes each layer from what the kernel offers (l), the
// cgroup v2 folder commands get their cgroups under (cgRoot, or cgErr
// saying why there is none), and the profile's sandbox.network.
func SandboxLayers(l sandbox.Layers, cgRoot string, cgErr error, network string) []SandboxLayer {
	why := func(key, fallback string) string {
		if w := l.Missing[key]; w != "" {
			return w
		}
		return fallback
	}
	landlock := "Landlock"
	if l.LandlockABI > 0 {
		landlock = fmt.Sprintf("Landlock ABI %d", l.LandlockABI)
	}
	cg := "cgroup v2"
	cgWhy := ""
	cgFix := "; mount cgroup v2 writable by this user (or delegate a subtree to it)"
	if runtime.GOOS != "linux" {
		cgFix = "" // the error says where to get one
	}
	if cgErr == nil && cgRoot != "" {
		cg += " " + cgRoot
	} else if cgErr != nil {
		cgWhy = cgErr.Error()
	} else {
		cgWhy = "no cgroup v2 folder found"
	}
	return []SandboxLayer{
		{Key: sandbox.LayerLandlock, Name: landlock, Active: l.LandlockABI > 0, Why: why(sandbox.LayerLandlock, "the kernel has no Landlock (Linux 5.13 or later with lsm=landlock)"),
			Means: "files are not walled: commands read and write whatever the user can", Short: "files not walled", Needed: true},
		{Key: sandbox.LayerSeccomp, Name: "seccomp user notification", Active: l.Seccomp, Why: why(sandbox.LayerSeccomp, "the kernel has no seccomp user notification (Linux 5.0 or later)"),
			Means: "exec rules hold only where the guard sees the command, not for what make, scripts or interpreters start, and connects to unix sockets are not judged",
			Short: "exec rules at parse time only, unix sockets unjudged", Needed: true},
		{Key: sandbox.LayerCgroup, Name: cg, Active: cgErr == nil && cgRoot != "", Why: cgWhy + cgFix,
			Means: "commands run in process groups only: a setsid child of a timed-out command lives on", Short: "process groups only", Needed: true},
		{Key: sandbox.LayerMountNS, Name: "mount namespace", Active: l.MountNS, Why: why(sandbox.LayerMountNS, "mount namespaces are not available to this user"),
			Means: "/run and its sockets (a container engine's, the init system's) stay reachable", Short: "/run reachable", Needed: true},
		{Key: sandbox.LayerNetNS, Name: "network namespace", Active: l.NetNS, Why: why(sandbox.LayerNetNS, "network namespaces are not available to this user"),
			Means: "sandbox.network off cannot cut commands off the network, and under proxy they find the proxy by its variables only: a command that ignores them connects directly (in a pod, a NetworkPolicy can hold egress)",
			Short: netnsShort(network), Needed: network != policy.NetworkOn},
		{Key: sandbox.LayerCaps, Name: "capability drop", Active: l.CapDrop, Why: why(sandbox.LayerCaps, "capabilities cannot be dropped here"),
			Means: "commands run as root keep every capability root has", Short: "root keeps its capabilities", Needed: true},
	}
}

// SocketLine says in one line which unix sockets a command may connect
// to on a machine with layers l, where the profile exposes unixSockets
// (sandbox.unix_sockets): judged by the supervisor with seccomp user
// notification, abstract ones scoped by Landlock ABI 6, and nothing
// judged without seccomp.
func SocketLine(l sandbox.Layers, unixSockets []string) string {
	if !l.Seccomp {
		return "not judged: without seccomp user notification a command connects to any unix socket the user can reach " +
			"(an agent's, an editor's, a tmux server's); a private /tmp per session hides only those under the temp folders"
	}
	where := "the workspace, the session's temp folder and approved paths"
	if len(unixSockets) > 0 {
		where += ", and the profile's sandbox.unix_sockets: " + strings.Join(unixSockets, ", ")
	} else {
		where += " (sandbox.unix_sockets names none)"
	}
	abstract := "abstract sockets only its own (Landlock ABI 6 scoping)"
	if l.LandlockABI < 6 {
		abstract = "abstract sockets any in its network namespace, the machine's unless sandbox.network is off (Landlock ABI 6 would scope them)"
	}
	return "each connect judged by the supervisor, which makes it itself: a command reaches unix sockets in " + where +
		"; " + abstract + "; unix datagram sockets refused"
}

// SandboxMissing returns the layers the profile needs that are missing.
func SandboxMissing(layers []SandboxLayer) []SandboxLayer {
	var out []SandboxLayer
	for _, l := range layers {
		if l.Needed && !l.Active {
			out = append(out, l)
		}
	}
	return out
}

// SandboxLine says in one line how commands are contained: the mode and
// where it was set (origin, a layer label as config.Loaded.Origins gives
// it), the active layers, and what each missing one means.
func SandboxLine(mode, origin string, layers []SandboxLayer) string {
	if mode == policy.SandboxOff {
		return fmt.Sprintf("sandbox off (%s): commands run with the guard's check only", originText(origin))
	}
	var active, tail []string
	ns := []string{}
	for _, l := range layers {
		if !l.Active {
			continue
		}
		switch l.Key {
		case sandbox.LayerSeccomp:
			active = append(active, "seccomp exec and socket rules")
		case sandbox.LayerCgroup:
			active = append(active, strings.Replace(l.Name, "cgroup v2", "cgroup", 1))
		case sandbox.LayerMountNS:
			ns = append(ns, "mount")
		case sandbox.LayerNetNS:
			ns = append(ns, "network")
		case sandbox.LayerLandlock:
			active = append(active, strings.ToLower(l.Name[:1])+l.Name[1:])
		default:
			tail = append(tail, l.Name)
		}
	}
	switch len(ns) {
	case 1:
		active = append(active, ns[0]+" namespace")
	case 2:
		active = append(active, "mount and network namespaces")
	}
	active = append(active, tail...)
	var b strings.Builder
	fmt.Fprintf(&b, "sandbox %s", mode)
	if len(active) > 0 {
		b.WriteString(": " + strings.Join(active, ", "))
	} else {
		b.WriteString(": no kernel layer is active")
	}
	missing := SandboxMissing(layers)
	if len(missing) == 0 {
		return b.String()
	}
	var parts []string
	for _, l := range missing {
		parts = append(parts, fmt.Sprintf("%s (%s)", l.Key, l.Short))
	}
	b.WriteString("; missing: " + strings.Join(parts, ", "))
	if mode == policy.SandboxRequired {
		b.WriteString("; sandbox: required, so commands are refused here (yagent doctor says what to do)")
	} else {
		b.WriteString("; commands run without them (yagent doctor says why and what to do)")
	}
	return b.String()
}

// originText names where the mode was set, for the start-up line.
func originText(origin string) string {
	switch {
	case origin == "flags":
		return "--sandbox"
	case origin == "":
		return "profile"
	}
	return "profile, " + origin
}

// SandboxOrigin is the layer the resolved sandbox.mode came from.
func SandboxOrigin(ld *config.Loaded) string {
	o := ld.Origins["sandbox.mode"]
	if len(o) == 0 {
		return ""
	}
	return o[len(o)-1]
}

// What a bound of a command's tree is here (SandboxBound.Status).
const (
	// BoundActive: the profile sets the bound, and commands get it.
	BoundActive = "active"
	// BoundOff: the profile sets none (0).
	BoundOff = "off"
	// BoundMissing: the profile sets it, and this machine cannot: commands
	// run without it.
	BoundMissing = "missing"
)

// SandboxBound is one bound of the sandbox on what a command may use, as
// the profile sets it and this machine gives it.
type SandboxBound struct {
	// Key is the profile key: sandbox.pids, sandbox.memory_mb or
	// sandbox.tmp_size_mb.
	Key string
	// What names the bound and its value: "processes 4096", "memory 8192
	// MiB", "temp folder 4096 MiB".
	What string
	// Value is the profile's value, 0 for none.
	Value int
	// Status is BoundActive, BoundOff or BoundMissing.
	Status string
	// How says how commands get it (active, set), or would (off), or why
	// they cannot and what follows (missing).
	How string
}

// BoundTmpSize names, in ProbeBounds, the size of the session temp folders
// (sandbox.tmp_size_mb), which a tmpfs of that size on each folder gives.
const BoundTmpSize = "tmp_size"

// ProbeBounds says how commands get each bound of their tree here
// (cgroup.Enforcements) on a machine with layers l, and the session temp
// folders their size (BoundTmpSize: whether they stand for the commands'
// temp folders, as a mount namespace lets them, and this process can
// mount a tmpfs on one).
func ProbeBounds(l sandbox.Layers) []cgroup.Enforcement {
	return append(cgroup.Enforcements(), probeTmpSize(l))
}

// probeTmpSize mounts a small tmpfs where the session folders live, and
// takes it away, to say whether they can have a size of their own.
func probeTmpSize(l sandbox.Layers) cgroup.Enforcement {
	e := cgroup.Enforcement{Bound: BoundTmpSize}
	if !l.MountNS {
		e.Why = "there is no mount namespace here (" + l.Missing[sandbox.LayerMountNS] + "), so commands see the machine's temp folders"
		return e
	}
	root, err := sessiontmp.Root()
	if err == nil {
		err = sessiontmp.ProbeSize(root)
	}
	switch {
	case errors.Is(err, fs.ErrPermission):
		e.Why = "mounting a tmpfs on a session's folder needs root (CAP_SYS_ADMIN), which this process has not"
	case err != nil:
		e.Why = err.Error()
	default:
		e.Via, e.Dir = "tmpfs", root
	}
	return e
}

// SandboxBounds describes the bounds of the profile's sandbox (sb) on
// each command: the processes and the memory of its tree, as enf says this
// machine enforces them, and the size of the session temp folder.
func SandboxBounds(sb policy.SandboxRules, enf []cgroup.Enforcement) []SandboxBound {
	by := map[string]cgroup.Enforcement{}
	for _, e := range enf {
		by[e.Bound] = e
	}
	var out []SandboxBound
	for _, b := range []struct {
		bound, key, what, unit string
		value                  int
		means                  string
	}{
		{cgroup.BoundPids, "sandbox.pids", "processes", "", sb.Pids, "one command's fork bomb can fill the machine's process table"},
		{cgroup.BoundMemory, "sandbox.memory_mb", "memory", " MiB", sb.MemoryMB, "one command's tree can take all the memory of the machine"},
	} {
		e := by[b.bound]
		sbd := SandboxBound{Key: b.key, What: b.what, Value: b.value}
		via := ""
		if e.Via != "" {
			via = fmt.Sprintf("the %s under %s", e.Via, filepath.Dir(e.Dir))
		}
		switch {
		case b.value == 0 && via != "":
			sbd.Status, sbd.How = BoundOff, "no bound; "+via+" would set one"
		case b.value == 0:
			sbd.Status, sbd.How = BoundOff, "no bound"
		case via != "":
			sbd.Status, sbd.How = BoundActive, via
			sbd.What += fmt.Sprintf(" %d%s", b.value, b.unit)
		default:
			why := e.Why
			if why == "" {
				why = "this machine has no way to set it"
			}
			sbd.Status, sbd.How = BoundMissing, why+"; commands run without it, so "+b.means
			sbd.What += fmt.Sprintf(" %d%s", b.value, b.unit)
		}
		out = append(out, sbd)
	}
	return append(out, tmpBound(sb.TmpSizeMB, by[BoundTmpSize]))
}

// tmpBound describes the size of the session temp folders, sizeMB MiB
// (0 for none), as e says this machine gives it.
func tmpBound(sizeMB int, e cgroup.Enforcement) SandboxBound {
	b := SandboxBound{Key: "sandbox.tmp_size_mb", What: "temp folder", Value: sizeMB}
	if sizeMB > 0 {
		b.What += fmt.Sprintf(" %d MiB", sizeMB)
	}
	switch {
	case sizeMB == 0:
		b.Status, b.How = BoundOff, "no size of its own"
	case e.Via != "":
		b.Status, b.How = BoundActive, "a tmpfs of that size on each session's folder under "+e.Dir
	default:
		why := e.Why
		if why == "" {
			why = "this machine has no way to set it"
		}
		b.Status, b.How = BoundMissing, why+"; each session's folder takes what the disk under it has, so one command can fill that disk"
	}
	return b
}

// netnsShort is what a command lacks without the network namespace.
func netnsShort(network string) string {
	if network == policy.NetworkProxy {
		return "the proxy by its variables only"
	}
	return "the network stays on"
}
