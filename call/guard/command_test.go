package guard

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// execTool is the test exec tool: Effect exec, params command (role
// command) and danger (role danger_flag).
var execTool = sdk.Spec{Name: "exec_tool", Effect: sdk.EffectExec, Roles: execRoles}

func TestWorkspaceGuard_Commands(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.guard(nil)
	ws := f.ws
	for _, tc := range []struct {
		cmd    string
		danger any
		want   adapter.Action
		path   string // among the Decision's paths when it asks
	}{
		{cmd: "rm -rf " + ws, want: adapter.Ask, path: ws},
		{cmd: "rm -rf " + ws + "/", want: adapter.Ask, path: ws},
		{cmd: "cat /etc/shadow", want: adapter.Ask, path: "/etc/shadow"},
		{cmd: "echo x > /etc/x", want: adapter.Ask, path: "/etc/x"},
		{cmd: "echo $(cat ~/.ssh/id_rsa)", want: adapter.Ask, path: filepath.Join(f.home, ".ssh", "id_rsa")},
		{cmd: "ls /usr/bin", want: adapter.Allow},
		{cmd: "cat README.md | grep x", want: adapter.Allow},
		{cmd: "cd sub && make", want: adapter.Allow},
		{cmd: "go test ./... > /dev/null 2>&1 </dev/zero", want: adapter.Allow},
		{cmd: "cat " + filepath.Join(ws, "sub", "a.go"), want: adapter.Allow},
		{cmd: "/usr/bin/env ls /opt/x /lib64/../usr/lib /sbin /bin/sh", want: adapter.Allow},
		{cmd: "head -c 8 /dev/urandom | od", want: adapter.Allow},
		{cmd: "echo hi > /dev/stderr", want: adapter.Allow},
		{cmd: "curl -s https://example.com/a/b", want: adapter.Allow},
		{cmd: "ls ..test '%2e%2e' inner/", want: adapter.Allow},

		{cmd: "rm -rf /", want: adapter.Ask, path: "/"},
		{cmd: "ls /", want: adapter.Ask, path: "/"},
		{cmd: "rm -rf //", want: adapter.Ask, path: "/"},
		{cmd: "cat //etc/passwd", want: adapter.Ask, path: "/etc/passwd"},
		{cmd: "ls /tmpx", want: adapter.Ask, path: "/tmpx"},
		{cmd: "ls /dev/stdout/../../etc", want: adapter.Ask},
		{cmd: "cat " + ws + "_evil/x", want: adapter.Ask, path: ws + "_evil/x"},
		{cmd: "ls " + f.root, want: adapter.Ask, path: f.root},
		{cmd: "rm -rf " + f.root + "/*", want: adapter.Ask, path: f.root},
		{cmd: "ls ..", want: adapter.Ask, path: f.root},
		{cmd: "cat ../other/secret", want: adapter.Ask, path: filepath.Join(f.other, "secret")},
		{cmd: "cat escape/secret", want: adapter.Ask, path: filepath.Join(f.other, "secret")},
		{cmd: "cat escfile", want: adapter.Ask, path: filepath.Join(f.other, "secret")},
		{cmd: "X=/etc/x make", want: adapter.Ask, path: "/etc/x"},
		{cmd: "make --prefix=/opt/x DESTDIR=/srv/x", want: adapter.Ask, path: "/srv/x"},
		{cmd: "gcc -o/etc/x a.c", want: adapter.Ask, path: "/etc/x"},
		{cmd: "cat {/etc/shadow,README.md}", want: adapter.Ask, path: "/etc/shadow"},
		{cmd: `python3 -c "print(open('/etc/passwd').read())"`, want: adapter.Ask, path: "/etc/passwd"},
		{cmd: "(cd /etc && cat passwd)", want: adapter.Ask, path: "/etc"},
		{cmd: "cat <(cat /etc/hosts)", want: adapter.Ask, path: "/etc/hosts"},
		{cmd: "cat <<EOF\n$(cat /etc/hosts)\nEOF", want: adapter.Ask, path: "/etc/hosts"},
		{cmd: "cat $HOME/.netrc", want: adapter.Ask, path: filepath.Join(f.home, ".netrc")},
		{cmd: "cd && cat .ssh/id_rsa", want: adapter.Ask, path: f.home},
		{cmd: "make -C ~/src", want: adapter.Ask},
		{cmd: "echo x > .yagent/config.yaml", want: adapter.Ask},
		{cmd: "bash", want: adapter.Ask},
		{cmd: "echo 'ls' | sh", want: adapter.Ask},
		{cmd: "if [ -f x; then", want: adapter.Ask},
		{cmd: "ls", danger: true, want: adapter.Ask},
		{cmd: "ls", danger: "true", want: adapter.Ask},
		{cmd: "ls", danger: false, want: adapter.Allow},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			args := cmdArgs(tc.cmd)
			if tc.danger != nil {
				args["danger"] = tc.danger
			}
			d := check(g, execTool, args)
			if d.Action != tc.want {
				t.Fatalf("Check(%q) = %v (%s), want %v", tc.cmd, d.Action, d.Reason, tc.want)
			}
			if d.Action == adapter.Ask {
				if d.Command != tc.cmd {
					t.Fatalf("Command = %q, want the command for the user to see", d.Command)
				}
				if tc.path != "" && !slices.Contains(d.Paths, tc.path) {
					t.Fatalf("Paths = %v, want %s among them", d.Paths, tc.path)
				}
			}
		})
	}
}

// TestWorkspaceGuard_ExecRuleBypass: a rule on rm holds however the command
// spells or wraps it; a program only known when the command runs could be rm,
// so with a deny rule in force it is denied too, -y or not.
func TestWorkspaceGuard_ExecRuleBypass(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	deny := &policy.Rules{Exec: policy.ExecRules{Rules: []policy.ExecRule{{Action: policy.ExecDeny, Program: "rm"}}}}
	g := f.guard(func(o *Options) { o.Policy = deny })
	for _, tc := range []struct {
		cmd  string
		want adapter.Action
	}{
		{"rm x", adapter.Deny},
		{"/bin/rm x", adapter.Deny},
		{"/usr/bin/rm -rf x", adapter.Deny},
		{"env rm x", adapter.Deny},
		{"env -i FOO=1 rm x", adapter.Deny},
		{"xargs rm", adapter.Deny},
		{"xargs -0 -n 1 rm", adapter.Deny},
		{"find . -exec rm {} +", adapter.Deny},
		{"find . -name '*.o' -execdir rm {} \\;", adapter.Deny},
		{`find . -exec sh -c 'rm "$1"' _ {} \;`, adapter.Deny},
		{`bash -c "rm x"`, adapter.Deny},
		{`sh -ec 'rm x'`, adapter.Deny},
		{`bash -c "bash -c 'rm x'"`, adapter.Deny},
		{"eval rm x", adapter.Deny},
		{`eval "r""m x"`, adapter.Deny},
		{`\rm x`, adapter.Deny},
		{`r""m x`, adapter.Deny},
		{`'rm' x`, adapter.Deny},
		{`$'\x72m' x`, adapter.Deny},
		{"r{m,} x", adapter.Deny},
		{"sudo -u root rm x", adapter.Deny},
		{"timeout -s KILL 5 nice -n 3 nohup rm x", adapter.Deny},
		{"command rm x", adapter.Deny},
		{"exec rm x", adapter.Deny},
		{"time rm x", adapter.Deny},
		{"/usr/bin/time -o t.txt rm x", adapter.Deny},
		{"stdbuf -o0 rm x", adapter.Deny},
		{"ls; rm x", adapter.Deny},
		{"ls && (rm x)", adapter.Deny},
		{"echo $(rm x)", adapter.Deny},
		{"f() { rm x; }; f", adapter.Deny},
		{"alias r='rm x'", adapter.Deny},
		{"trap 'rm x' EXIT", adapter.Deny},
		{"watch -n 1 rm x", adapter.Deny},
		{"env -S 'rm x'", adapter.Deny},

		{"$(echo rm) x", adapter.Deny},
		{"`echo rm` x", adapter.Deny},
		{"$cmd x", adapter.Deny},
		{"\"$(which rm)\" x", adapter.Deny},
		{"/bin/r? x", adapter.Deny},
		{"eval $cmd", adapter.Deny},
		{"source $f", adapter.Deny},
		{"bash -c \"$s\"", adapter.Deny},
		{"echo rm x | sh", adapter.Deny},
		{"echo rm | xargs -I{} {} x", adapter.Deny},
		{"find . -exec {} \\;", adapter.Deny},
		{"sudo -s", adapter.Deny},

		{"command -v rm", adapter.Allow},
		{"farm x", adapter.Allow},
		{"rm_old x", adapter.Allow},
		{"echo rm", adapter.Allow},
		{"ls", adapter.Allow},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			d := check(g, execTool, cmdArgs(tc.cmd))
			if d.Action != tc.want {
				t.Fatalf("Check(%q) = %v (%s), want %v", tc.cmd, d.Action, d.Reason, tc.want)
			}
			if d.Action == adapter.Deny && !strings.Contains(d.Reason, "deny") {
				t.Fatalf("deny reason %q does not name the rule", d.Reason)
			}
		})
	}
}

func TestWorkspaceGuard_ExecRules(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	rules := []policy.ExecRule{
		{Action: policy.ExecAsk, Program: "git"},
		{Action: policy.ExecAsk, Program: "rm"},
		{Action: policy.ExecAllow, Program: "rm", Args: []string{"-i"}},
		{Action: policy.ExecAsk, Program: "npm", Args: []string{"publish"}},
		{Action: policy.ExecDeny, Program: "curl", Args: []string{"-T"}},
	}
	g := f.guard(func(o *Options) { o.Policy = &policy.Rules{Exec: policy.ExecRules{Rules: rules}} })
	for _, tc := range []struct {
		cmd    string
		danger bool
		want   adapter.Action
	}{
		{cmd: "git status", want: adapter.Allow},                             // read-only softens the ask
		{cmd: "git status && git log --oneline | head", want: adapter.Allow}, //
		{cmd: "git diff HEAD~1 -- sub", want: adapter.Allow},
		{cmd: "git push", want: adapter.Ask},
		{cmd: "git status; git push", want: adapter.Ask},
		{cmd: "git status > out.txt", want: adapter.Ask},
		{cmd: "git -c core.pager=sh status", want: adapter.Ask},
		{cmd: "git diff --output=x", want: adapter.Ask},
		{cmd: "git status &", want: adapter.Ask},
		{cmd: "git diff /etc/passwd", want: adapter.Ask},     // never overrides a path ask
		{cmd: "git status", danger: true, want: adapter.Ask}, // never overrides danger_flag
		{cmd: "rm x", want: adapter.Ask},
		{cmd: "rm -i x", want: adapter.Allow}, // the longer allow prefix wins
		{cmd: "rm $flag x", want: adapter.Ask},
		{cmd: "npm publish", want: adapter.Ask},
		{cmd: "npm install", want: adapter.Allow},
		{cmd: "npm $verb", want: adapter.Ask}, // an unknown argument matches an ask prefix
		{cmd: "curl -T f https://x.test", want: adapter.Deny},
		{cmd: "curl https://x.test", want: adapter.Allow},
		{cmd: "make", want: adapter.Allow}, // no rule: allow, there is no blacklist
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			args := cmdArgs(tc.cmd)
			args["danger"] = tc.danger
			if d := check(g, execTool, args); d.Action != tc.want {
				t.Fatalf("Check(%q) = %v (%s), want %v", tc.cmd, d.Action, d.Reason, tc.want)
			}
		})
	}
}

func TestReadOnlyClassifier(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmd  string
		want bool
	}{
		{"cat a | grep b", true},
		{"ls -la && pwd; echo hi || true", true},
		{"git log --oneline -5", true},
		{"git status", true},
		{"git show HEAD:go.mod", true},
		{"sed -n '1,5p' f", true},
		{"sed -n -e '/start/,/end/p' f", true},
		{"find . -name '*.go' -type f", true},
		{"sort -u a | uniq -c", true},
		{"LC_ALL=C sort a", true},
		{"grep -rn x . 2>/dev/null", true},
		{"wc -l < a", true},

		{"find . -delete", false},
		{"find . -exec cat {} \\;", false},
		{"find . -fprint out", false},
		{"sed 's/a/b/' f", false},
		{"sed -n 's/a/b/w out' f", false},
		{"sed -n -i 1p f", false},
		{"sort -o x y", false},
		{"sort -ox y", false},
		{"git push", false},
		{"git -c x=y status", false},
		{"git diff --output=x", false},
		{"git diff --ext-diff", false},
		{"cat a > b", false},
		{"cat a >> b", false},
		{"cat a &", false},
		{"echo $(ls)", false},
		{"cat $f", false},
		{"(cat a)", false},
		{"tee x", false},
		{"uniq a b", false},
		{"rg --pre ./x y", false},
		{"date -s 2020-01-01", false},
		{"/bin/cat a", false},
		{"make", false},
		{"for f in a; do cat $f; done", false},
		{"", false},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			if got := analyzeCommand(tc.cmd, "/w", "/home/u", nil).readOnly; got != tc.want {
				t.Fatalf("readOnly(%q) = %v, want %v", tc.cmd, got, tc.want)
			}
		})
	}
}

// TestWorkspaceGuard_Check covers the Effect table of
// docs/ARCHITECTURE.md#effect-table.
func TestWorkspaceGuard_Check(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.guard(func(o *Options) {
		o.Policy.Network = policy.NetworkRules{Allow: []string{"*.example.com", "go.dev"}}
	})
	url := map[string]sdk.Role{"url": sdk.RoleURL}
	for _, tc := range []struct {
		name    string
		spec    sdk.Spec
		args    map[string]any
		trusted bool
		want    adapter.Action
	}{
		{"none", spec(sdk.EffectNone, nil), nil, true, adapter.Allow},
		{"flow", spec(sdk.EffectFlow, nil), nil, true, adapter.Allow},
		{"read inside", spec(sdk.EffectRead, readRoles), readArgs("sub/a.go"), true, adapter.Allow},
		{"read list of paths", spec(sdk.EffectRead, readRoles), map[string]any{"path": []any{"sub", "../other"}}, true, adapter.Ask},
		{"exec without roles, trusted", spec(sdk.EffectExec, nil), map[string]any{"input": "x"}, true, adapter.Allow},
		{"exec of an unpinned plugin", spec(sdk.EffectExec, nil), map[string]any{"input": "x"}, false, adapter.Ask},
		{"always asks", sdk.Spec{Name: "t", Effect: sdk.EffectNone, AlwaysAsk: true}, nil, true, adapter.Ask},
		{"network allowed host", spec(sdk.EffectNetwork, url), map[string]any{"url": "https://docs.example.com/a"}, true, adapter.Allow},
		{"network exact host", spec(sdk.EffectNetwork, url), map[string]any{"url": "https://go.dev/doc"}, true, adapter.Allow},
		{"network other host", spec(sdk.EffectNetwork, url), map[string]any{"url": "https://evil.test/"}, true, adapter.Ask},
		{"network lookalike host", spec(sdk.EffectNetwork, url), map[string]any{"url": "https://example.com.evil.test/"}, true, adapter.Ask},
		{"network without URL", spec(sdk.EffectNetwork, nil), nil, true, adapter.Ask},
		{"browser allowed host", spec(sdk.EffectBrowser, url), map[string]any{"url": "https://docs.example.com/a"}, true, adapter.Allow},
		{"browser other host", spec(sdk.EffectBrowser, url), map[string]any{"url": "https://evil.test/"}, true, adapter.Ask},
		{"browser file scheme", spec(sdk.EffectBrowser, url), map[string]any{"url": "file:///etc/passwd"}, true, adapter.Ask},
		{"browser javascript scheme", spec(sdk.EffectBrowser, url), map[string]any{"url": "javascript:alert(1)"}, true, adapter.Ask},
		{"unknown effect", spec("teleport", nil), nil, true, adapter.Ask},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := g.Check(context.Background(), adapter.GuardRequest{Spec: tc.spec, Args: tc.args, Session: session.New("s"), Trusted: tc.trusted})
			if d.Action != tc.want {
				t.Fatalf("Check = %v (%s), want %v", d.Action, d.Reason, tc.want)
			}
			if d.Action == adapter.Ask && d.Reason == "" {
				t.Fatal("an ask must say why")
			}
		})
	}
}

// TestSafeSystemPaths checks the one list with the real guard: the
// workspace lives under /tmp here, like any t.TempDir().
func TestSafeSystemPaths(t *testing.T) {
	ws := t.TempDir()
	if !policy.Within("/tmp", ws, false) {
		t.Skipf("the workspace %s is not under /tmp", ws)
	}
	t.Setenv("TMPDIR", "/var/cache/yagent-test-tmp")
	g := New(Options{Workspace: ws, Home: "/nonexistent-home"})
	for _, tc := range []struct {
		cmd  string
		want adapter.Action
	}{
		{"ls /usr/lib /bin /sbin/x /lib/x /lib64/x /opt/x", adapter.Allow},
		{"echo > /dev/null < /dev/zero; head /dev/urandom; cat /dev/stdin /dev/tty > /dev/stdout 2> /dev/stderr", adapter.Allow},
		{"ls /tmp/some-other-dir", adapter.Allow},
		{"ls /var/cache/yagent-test-tmp/x", adapter.Allow},
		{"ls /var/cache/yagent-test-tmpx", adapter.Ask},
		{"ls /tmp", adapter.Ask}, // holds the workspace
		{"rm -rf /tmp/*", adapter.Ask},
		{"ls /usrx /libx", adapter.Ask},
		{"cat /dev/sda", adapter.Ask},
		{"cat /etc/hosts", adapter.Ask},
		{"cat /proc/self/environ", adapter.Ask},
		{"ls /", adapter.Ask},
	} {
		d := check(g, execTool, cmdArgs(tc.cmd))
		if d.Action != tc.want {
			t.Errorf("Check(%q) = %v (%s), want %v", tc.cmd, d.Action, d.Reason, tc.want)
		}
	}
}

// TestWorkspaceGuard_UnknownProgramAsksWithoutDenyRules: with no deny rule
// in force, a program only known when the command runs asks; with one, it
// is denied (and the authorization loop never turns a deny into allow).
func TestWorkspaceGuard_UnknownProgramAsksWithoutDenyRules(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ask := &policy.Rules{Exec: policy.ExecRules{Rules: []policy.ExecRule{{Action: policy.ExecAsk, Program: "rm"}}}}
	deny := &policy.Rules{Exec: policy.ExecRules{Rules: []policy.ExecRule{{Action: policy.ExecDeny, Program: "rm"}}}}
	for _, tc := range []struct {
		name    string
		profile *policy.Rules
		want    adapter.Action
	}{
		{"no rules", nil, adapter.Ask},
		{"ask rule", ask, adapter.Ask},
		{"deny rule", deny, adapter.Deny},
	} {
		g := f.guard(func(o *Options) { o.Policy = tc.profile })
		if d := check(g, execTool, cmdArgs("$(echo rm) x")); d.Action != tc.want {
			t.Errorf("%s: Check($(echo rm) x) = %v (%s), want %v", tc.name, d.Action, d.Reason, tc.want)
		}
	}
}
