//go:build linux

package sandbox

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/yagent/yagent/sdk/sandbox/execwatch"
)

func probe() Layers {
	l := probeOnce()
	l.Missing = maps.Clone(l.Missing)
	return l
}

// probeKernel asks the kernel for each layer; the namespaces are tried on
// a thread of their own, which then ends.
func probeKernel() Layers {
	if layersReportedNone() {
		return noLayers("this test build", " ("+testLayersEnv+"=none)")
	}
	l := Layers{CapDrop: true, Missing: map[string]string{}}
	if abi, err := landlockABI(); err == nil {
		l.LandlockABI = abi
	} else {
		l.Missing[LayerLandlock] = fmt.Sprintf("this kernel has no Landlock (%v): commands can read and write what the user can; "+
			"use Linux 5.13 or later with landlock in the lsm= boot list", err)
	}
	action := uint32(unix.SECCOMP_RET_USER_NOTIF)
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action))); errno == 0 {
		l.Seccomp = true
	} else {
		l.Missing[LayerSeccomp] = fmt.Sprintf("this kernel has no seccomp user notification (%v): exec rules hold only for the commands the guard reads; "+
			"use Linux 5.0 or later", errno)
	}
	mnt, net := make(chan error, 1), make(chan error, 1)
	onThrowawayThread(func() {
		mnt <- unix.Unshare(unix.CLONE_NEWNS)
		net <- unix.Unshare(unix.CLONE_NEWNET)
	})
	why := func(err error) string {
		if os.Geteuid() != 0 {
			return fmt.Sprintf("yagent runs as uid %d without CAP_SYS_ADMIN (%v), and a multithreaded process cannot enter a user namespace; "+
				"run yagent as root or with CAP_SYS_ADMIN", os.Geteuid(), err)
		}
		return fmt.Sprintf("unshare failed (%v): a container or seccomp profile forbids namespaces; allow CAP_SYS_ADMIN and unshare", err)
	}
	if err := <-mnt; err == nil {
		l.MountNS = true
	} else {
		l.Missing[LayerMountNS] = "commands see /run and its sockets (Landlock before ABI 9 does not cover connecting to them): " + why(err)
	}
	if err := <-net; err == nil {
		l.NetNS = true
	} else {
		l.Missing[LayerNetNS] = "sandbox.network: off cannot take the network from commands: " + why(err)
	}
	return l
}

var probeOnce = sync.OnceValue(probeKernel)

// result is what the confined thread hands back.
type result struct {
	st  *Started
	err error
}

func start(cmd *exec.Cmd, p Policy) (*Started, error) {
	kernel := probe()
	ensureCaches(p)
	rs := p.ruleset()
	var ll *llRuleset
	if kernel.LandlockABI > 0 {
		var err error
		if ll, err = rulesets.get(kernel.LandlockABI, rs); err != nil {
			return nil, err
		}
		defer rulesets.release(ll)
	}
	if cmd.Dir == "" {
		// Entering a mount namespace moves the thread to its root; the
		// command keeps the plugin's folder.
		if wd, err := os.Getwd(); err == nil {
			cmd.Dir = wd
		}
	}
	namespaces() // opened from this, unconfined, thread
	ch := make(chan result, 1)
	// Go ends the thread when the goroutine returns, so a thread under
	// these limits is never reused.
	onThrowawayThread(func() {
		st, err := confineAndStart(cmd, p, kernel, rs, ll)
		ch <- result{st, err}
		switch {
		case err != nil:
		case st.proxy != nil:
			// The thread makes the tree's abstract connects while the
			// command runs (and keeps its death signal).
			exited := make(chan struct{})
			go func() { waitExit(cmd.Process.Pid); close(exited) }()
			st.proxy.Serve(exited)
		case cmd.SysProcAttr != nil && cmd.SysProcAttr.Pdeathsig != 0:
			// The death signal follows the thread that forked: keep it
			// until the command ends.
			waitExit(cmd.Process.Pid)
		}
	})
	r := <-ch
	return r.st, r.err
}

// confineAndStart applies the layers to the calling, locked thread in the
// order they need (namespaces and mounts while it holds CAP_SYS_ADMIN,
// then capabilities, no_new_privs, Landlock, the seccomp filter) and
// starts cmd from it.
func confineAndStart(cmd *exec.Cmd, p Policy, kernel Layers, rs *ruleset, ll *llRuleset) (*Started, error) {
	st := &Started{Widened: rs.Widened, Unopened: rs.Unopened, Applied: Layers{Missing: map[string]string{}}}
	a := &st.Applied
	miss := func(layer, why string) { a.Missing[layer] = why }

	if p.Join != nil {
		// First, while nothing confines the thread: the command is born in
		// the groups the thread is in when it forks, and the thread leaves
		// them as this returns, right after the fork (cmd.Start returns
		// once the child has exec'd: Go forks with CLONE_VFORK).
		leave, err := p.Join()
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		defer leave()
	}

	if kernel.MountNS {
		// A namespace the kernel offered but would not give is reported,
		// not fatal: the command still gets every other layer.
		if err := enterNamespaces(p, kernel, rs); err != nil {
			miss(LayerMountNS, "the command's namespaces could not be made ("+err.Error()+"): /run stays visible; check that unshare and setns are allowed here")
		} else {
			a.MountNS = true
			a.NetNS = !p.Network && kernel.NetNS
		}
	} else {
		miss(LayerMountNS, kernel.Missing[LayerMountNS])
		if !p.Network && kernel.NetNS {
			c := namespaces()
			net, err := c.netFor(p)
			if err == nil {
				err = enter(net, unix.CLONE_NEWNET)
				c.release(net)
			}
			if err == nil {
				a.NetNS = true
			}
		}
	}
	if !p.Network && !a.NetNS {
		if p.NetNS != "" {
			// Its only way out is the proxy: without it the command would
			// have the machine's network, which the profile refused.
			return nil, fmt.Errorf("sandbox: the session's network namespace could not be entered (%s); nothing was run. Run yagent doctor to see what is missing",
				cmp.Or(kernel.Missing[LayerNetNS], a.Missing[LayerMountNS], "setns refused"))
		}
		why := kernel.Missing[LayerNetNS]
		if why == "" {
			why = "the empty network namespace could not be entered: the command has the network"
		}
		miss(LayerNetNS, why)
	}
	if p.netMissing != "" {
		miss(LayerNetNS, p.netMissing)
	}

	if kernel.CapDrop {
		if err := dropCaps(); err != nil {
			return nil, err
		}
		a.CapDrop = true
	} else {
		miss(LayerCaps, kernel.Missing[LayerCaps])
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("sandbox: setting no_new_privs: %w", err)
	}
	if ll != nil {
		if err := restrictSelf(ll); err != nil {
			return nil, err
		}
		a.LandlockABI = kernel.LandlockABI
	} else {
		miss(LayerLandlock, kernel.Missing[LayerLandlock])
	}
	// The filter refuses set-id modes and io_uring for every command; it
	// hands its listener the tree's execs when p.Exec, and those refusals
	// when p.Supervise answers them. Without user notification the kernel
	// refuses them itself and no exec is judged.
	f := execwatch.Filter{Exec: p.Exec, Report: p.Supervise != nil, Sockets: p.Supervise != nil && !socketRulesOff}
	if !kernel.Seccomp {
		f = execwatch.Filter{}
	}
	switch l, err := execwatch.InstallFilter(f); {
	case err != nil:
		why := kernel.Missing[LayerSeccomp]
		if why == "" {
			why = "the filter could not be installed: " + err.Error()
		}
		miss(LayerSeccomp, why)
	case p.Exec && !f.Exec:
		miss(LayerSeccomp, kernel.Missing[LayerSeccomp])
	default:
		st.Listener, a.Seccomp, a.Sockets = l, true, f.Sockets
	}
	if st.Listener != nil && p.Supervise != nil {
		// The command's first exec waits for an answer: the supervisor
		// must run before the fork. It owns the listener from here.
		var proxy execwatch.Proxy
		if a.Sockets && a.LandlockABI >= 6 {
			// Landlock scopes abstract sockets to the domain: connects to
			// them are made from this thread, in it.
			st.proxy = execwatch.NewThreadProxy()
			proxy = st.proxy
		}
		p.Supervise(st.Listener, proxy)
		st.Listener = nil
	}
	if err := cmd.Start(); err != nil {
		if st.Listener != nil {
			st.Listener.Close()
		}
		return nil, err
	}
	return st, nil
}

// enterNamespaces puts the calling thread into the kept namespaces, or
// into new ones of its own where none can be kept.
func enterNamespaces(p Policy, kernel Layers, rs *ruleset) error {
	offline := !p.Network && kernel.NetNS
	hidden := hiddenDirs()
	bs := backings(rs, hidden)
	tmp := tmpOf(p)
	c := namespaces()
	mnt, err := c.mountNS(hidden, bs, tmp)
	if err != nil {
		return err
	}
	defer c.release(mnt)
	var net *nsRef
	if offline {
		if net, err = c.netFor(p); err != nil {
			return err
		}
		defer c.release(net)
	}
	if mnt == nil {
		flags := unix.CLONE_NEWNS
		if offline && net == nil {
			flags |= unix.CLONE_NEWNET
		}
		if err := unix.Unshare(flags); err != nil {
			return fmt.Errorf("sandbox: unshare: %w", err)
		}
		if err := privateMounts(hidden, bs, tmp, unix.MS_PRIVATE); err != nil {
			return err
		}
	} else if err := enter(mnt, unix.CLONE_NEWNS); err != nil {
		return err
	}
	if net != nil {
		return enter(net, unix.CLONE_NEWNET)
	}
	return nil
}

// waitExit blocks until process pid has exited.
func waitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != unix.EINTR {
			return
		}
	}
}

// ensureCaches creates the missing cache folders of installed toolchains,
// so a cold cache works without widening its ancestor. One seen before is
// not looked at again: a command may remove it only where it may write
// its parent, and there it may make it again.
func ensureCaches(p Policy) {
	for _, c := range toolchainCaches(p) {
		if !c.tool {
			continue
		}
		if _, seen := resolvedStable.Load(c.path); seen {
			continue
		}
		if _, err := os.Stat(c.path); os.IsNotExist(err) {
			_ = os.MkdirAll(c.path, 0o755)
		}
	}
}

// forgetTmp lets the kept mount namespaces binding dir go.
func forgetTmp(dir string) { namespaces().forgetTmp(filepath.Clean(dir)) }
