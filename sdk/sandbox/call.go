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
		Env:         env,
		Pids:        sb.Pids,
		MemoryMB:    sb.MemoryMB,
		TmpSizeMB:   sb.TmpSizeMB,
		UnixSockets: sb.UnixSockets,
	}
	if t := info.Temp; t != nil {
		p.Tmp, p.TmpOver = t.Dir, t.Over
	}
	switch policy.NetworkMode(sb.Network) {
	case policy.NetworkOn:
		p.Network = true
	case policy.NetworkProxy:
		switch e := sb.Egress; {
		case e == nil:
			// No proxy for the session: the empty namespace, closed.
		case e.NetNS != "":
			p.NetNS = e.NetNS
		case e.Proxy != "":
			p.Network = true
			p.netMissing = "the host could not make the session's network namespace: commands find the proxy by its variables, and one that ignores them connects directly"
		}
	}
	return p, sb.Mode, true
}

// ProxyEnv is what the processes of a call under sandbox.network: proxy
// are told of the session's proxy (sb.Egress): the proxy variables in both
// cases, and the settings of the tools that read none of them (npm,
// cargo); nil for any other call. Loopback is left out of the proxy (the
// command's own servers are in its namespace).
func ProxyEnv(sb *sdk.Sandbox) []string {
	if sb == nil || policy.SandboxMode(sb.Mode) == policy.SandboxOff || policy.NetworkMode(sb.Network) != policy.NetworkProxy || sb.Egress == nil || sb.Egress.Proxy == "" {
		return nil
	}
	http, socks := "http://"+sb.Egress.Proxy, "socks5h://"+sb.Egress.Proxy
	const local = "localhost,127.0.0.1,::1"
	var env []string
	for _, kv := range [][2]string{
		{"HTTP_PROXY", http}, {"HTTPS_PROXY", http}, {"ALL_PROXY", socks}, {"NO_PROXY", local},
	} {
		env = append(env, kv[0]+"="+kv[1], strings.ToLower(kv[0])+"="+kv[1])
	}
	return append(env,
		"npm_config_proxy="+http, "npm_config_https_proxy="+http, "npm_config_noproxy="+local,
		"CARGO_HTTP_PROXY="+http,
		"YARN_HTTP_PROXY="+http, "YARN_HTTPS_PROXY="+http,
		// ssh has no way out of the namespace: git says why and what works.
		"GIT_SSH_COMMAND="+gitSSHRefusal,
	)
}

// gitSSHRefusal is git's ssh under the proxy: it prints the way that works
// and fails as an unreachable remote does (the # drops git's arguments).
const gitSSHRefusal = `echo "yagent: git over ssh cannot leave the sandbox (sandbox.network: proxy lets HTTP and HTTPS out through the session's proxy only): use the https:// URL of the repository, such as git remote set-url origin https://HOST/OWNER/REPO.git" >&2; exit 128 #`

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
	if p.netMissing != "" {
		missing[LayerNetNS] = p.netMissing
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
