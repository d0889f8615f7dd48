package sandbox

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// ForCall returns the policy the host set for the processes of the call
// ctx belongs to, with env as their environment (nil: the plugin's), and
// the call's mode; ok is false when the call runs without a sandbox (none
// sent, or sandbox: off).
func ForCall(ctx context.Context, env []string) (p Policy, mode string, ok bool) {
	info := sdk.CallFrom(ctx)
	sb := info.Sandbox
	if sb == nil || policy.SandboxMode(sb.Mode) == policy.SandboxOff {
		return Policy{}, sdk.SandboxOff, false
	}
	if env == nil {
		env = os.Environ()
	}
	p = Policy{
		Workspace:   info.Workspace,
		Read:        sb.Read,
		Write:       sb.Write,
		Granted:     sb.Granted,
		Network:     sb.Network,
		Env:         env,
		Pids:        sb.Pids,
		MemoryMB:    sb.MemoryMB,
		TmpSizeMB:   sb.TmpSizeMB,
		UnixSockets: sb.UnixSockets,
	}
	if t := info.Temp; t != nil {
		p.Tmp, p.TmpOver = t.Dir, t.Over
	}
	return p, sb.Mode, true
}

// RequiredError refuses to start a process where sandbox: required and a
// layer is missing.
type RequiredError struct {
	// Missing names each missing layer with why.
	Missing map[string]string
}

func (e *RequiredError) Error() string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(e.Missing)) {
		parts = append(parts, fmt.Sprintf("%s (%s)", name, e.Missing[name]))
	}
	return fmt.Sprintf("the profile says sandbox: required, and this machine lacks %s; nothing was run. "+
		"Run yagent doctor to see what is missing, or ask the user to change the profile's sandbox mode", strings.Join(parts, ", "))
}

// CheckRequired returns a *RequiredError when mode is required and a
// layer p needs is missing here: the network namespace only counts when
// p turns the network off, the exec listener only when p supervises execs.
func CheckRequired(mode string, p Policy) error {
	if mode != sdk.SandboxRequired {
		return nil
	}
	missing := map[string]string{}
	for name, why := range Probe().Missing {
		switch {
		case name == LayerNetNS && p.Network,
			name == LayerSeccomp && !p.Exec:
			continue
		}
		missing[name] = why
	}
	if len(missing) == 0 {
		return nil
	}
	return &RequiredError{Missing: missing}
}

// StartForCall starts cmd, a child a plugin runs for the call ctx belongs
// to (ripgrep, ctags, the search plugin's own binary), inside that call's
// sandbox, with no exec supervision; as is when the call has none. read
// adds paths the child may read and run beyond the call's (the plugin's
// binary, wherever it is installed).
func StartForCall(ctx context.Context, cmd *exec.Cmd, read ...string) error {
	p, mode, ok := ForCall(ctx, cmd.Env)
	if !ok {
		return cmd.Start()
	}
	p.Read = append(slices.Clip(p.Read), read...)
	// Such a child is given the paths the host resolved, a file of the
	// session's temp folder by its own name: it sees the folders as they
	// are, the temp folder granted.
	p.TmpOver = nil
	if err := CheckRequired(mode, p); err != nil {
		return err
	}
	_, err := Start(cmd, p)
	return err
}
