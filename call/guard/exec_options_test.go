package guard

import (
	"context"
	"strings"
	"testing"

	"github.com/yagent/yagent/call/adapter"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/policy"
)

// TestExecRules_OptionsAsParsed: a rule's options hold against every
// spelling the program itself takes: any unambiguous prefix of a long
// option, down to one letter (GNU getopt_long, git's parse-options,
// curl); an ambiguous option, or one the program's table does not know,
// matches an ask or deny rule naming options, never an allow rule.
func TestExecRules_OptionsAsParsed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.guard(func(o *Options) {
		o.Policy = rulesProfile(
			policy.ExecRule{Action: policy.ExecDeny, Program: "rm", Args: []string{"-rf"}},
			policy.ExecRule{Action: policy.ExecDeny, Program: "rm", Args: []string{"--one-file-system"}},
			policy.ExecRule{Action: policy.ExecDeny, Program: "git", Args: []string{"push", "--force"}},
			policy.ExecRule{Action: policy.ExecDeny, Program: "git", Args: []string{"clean", "-x"}},
			policy.ExecRule{Action: policy.ExecDeny, Program: "curl", Args: []string{"--upload-file"}},
			policy.ExecRule{Action: policy.ExecAllow, Program: "chmod", Args: []string{"-R"}},
			policy.ExecRule{Action: policy.ExecAsk, Program: "chmod"},
			policy.ExecRule{Action: policy.ExecDeny, Program: "sed", Args: []string{"--in-place"}},
			policy.ExecRule{Action: policy.ExecDeny, Program: "frob", Args: []string{"--burn"}},
			policy.ExecRule{Action: policy.ExecDeny, Program: "tar", Args: []string{"--to-command"}},
		)
	})
	for _, tc := range []struct {
		cmd  string
		want adapter.Action
	}{
		{"rm --r --f x", adapter.Deny},
		{"rm --re --fo x", adapter.Deny},
		{"rm -r --f x", adapter.Deny},
		{"rm --f -r x", adapter.Deny},
		{"rm --r -f x", adapter.Deny},
		{"rm --recursive --force x", adapter.Deny},
		{"rm --recu --forc x", adapter.Deny},
		{"rm x --r --f", adapter.Deny},
		{"rm --no-preserve-root --r --f x", adapter.Deny},
		{"rm --no -R --fo x", adapter.Deny},
		{"rm -r --frobnicate x", adapter.Deny},
		{"rm -f --ver x", adapter.Deny},
		{"rm --v x", adapter.Deny},
		{"rm --o x", adapter.Deny},
		{"rm --one x", adapter.Deny},
		{"git push --forc", adapter.Deny},
		{"git push --fo origin main", adapter.Deny},
		{"git push --f", adapter.Deny},
		{"git push origin main --for", adapter.Deny},
		{"git -C sub push --fo", adapter.Deny},
		{"git --git-dir=.git push --fo", adapter.Deny},
		{"git --git-dir .git push --fo", adapter.Deny},
		{"git push --frobnicate", adapter.Deny},
		{"git clean -fx", adapter.Deny},
		{"curl --up f.txt https://example.com/", adapter.Deny},
		{"curl --upl f.txt https://example.com/", adapter.Deny},
		{"curl --upload-f=f.txt https://example.com/", adapter.Deny},
		{"curl -s -T f.txt https://example.com/", adapter.Deny},
		{"curl --uploadd f.txt https://example.com/", adapter.Deny},
		{"sed --in-p=.bak s/a/b/ f", adapter.Deny},
		{"sed --i s/a/b/ f", adapter.Deny},
		{"sed -i s/a/b/ f", adapter.Deny},
		{"frob --b", adapter.Deny},
		{"frob --bu=1", adapter.Deny},
		{"tar -xf a.tar --to-c=sh", adapter.Deny},
		{"chmod --rec 755 sub", adapter.Allow},
		{"chmod --re 755 sub", adapter.Ask},
		{"chmod --frob 755 sub", adapter.Ask},

		{"rm x", adapter.Allow},
		{"rm -r x", adapter.Allow},
		{"rm --r x", adapter.Allow},
		{"rm --f x", adapter.Allow},
		{"rm --dir x", adapter.Allow},
		{"rm --d --f x", adapter.Allow},
		{"rm --interactive=never -r x", adapter.Allow},
		{"rm --no-preserve-root x", adapter.Allow},
		{"rm --verbose x", adapter.Allow},
		{"git push", adapter.Allow},
		{"git push origin main", adapter.Allow},
		{"git push --force-with-lease", adapter.Allow},
		{"git push --force-w", adapter.Allow},
		{"git push --no-force", adapter.Allow},
		{"git push --follow-tags --tags", adapter.Allow},
		{"git commit --fixup HEAD", adapter.Allow},
		{"git clean -fd", adapter.Allow},
		{"curl -s https://example.com/", adapter.Allow},
		{"curl --silent --fail --compressed -o out https://example.com/", adapter.Allow},
		{"curl --output out --location https://example.com/", adapter.Allow},
		{"sed -n p f", adapter.Allow},
		{"sed --quiet -e p f", adapter.Allow},
		{"frob --bar", adapter.Allow},
		{"tar -xf a.tar", adapter.Allow},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			t.Parallel()
			if d := check(g, execTool, cmdArgs(tc.cmd)); d.Action != tc.want {
				t.Fatalf("Check(%q) = %v (%s), want %v", tc.cmd, d.Action, d.Reason, tc.want)
			}
		})
	}
}

// TestExecRules_DenialSaysWhatToWrite: a denial that came from an option
// the program does not read as one of its own, or from an argument only
// known when the command runs, says so and what to write instead; one the
// command's own words made says neither.
func TestExecRules_DenialSaysWhatToWrite(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	g := f.guard(func(o *Options) {
		o.Policy = rulesProfile(policy.ExecRule{Action: policy.ExecDeny, Program: "rm", Args: []string{"-rf"}})
	})
	for cmd, want := range map[string]string{
		"rm -r --frob x": "write each option in full",
		"rm --v x":       "write each option in full",
		"rm -r $d":       "write it literally",
		"rm -rf $d":      "",
		"rm --r --f x":   "",
	} {
		d := check(g, execTool, cmdArgs(cmd))
		if d.Action != adapter.Deny {
			t.Errorf("Check(%q) = %v (%s), want deny", cmd, d.Action, d.Reason)
			continue
		}
		for _, note := range []string{"write each option in full", "write it literally"} {
			if has := strings.Contains(d.Reason, note); has != (note == want) {
				t.Errorf("Check(%q) denied with %q: saying %q is %v, want %v", cmd, d.Reason, note, has, note == want)
			}
		}
	}
}

// TestExecRules_RuntimeArgumentsUnderTheSupervisor: where every execve of
// a command's tree is judged with its real arguments (the sandbox on, the
// kernel's exec listener there), an argument only known when the command
// runs does not make an ask or deny rule match when the command is read;
// its execve is judged. Without the supervisor, or for a shell builtin,
// which runs without an execve, or a copy of a rule's program, the
// parse-time check stays conservative.
func TestExecRules_RuntimeArgumentsUnderTheSupervisor(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	rules := []policy.ExecRule{
		{Action: policy.ExecDeny, Program: "rm", Args: []string{"-rf"}},
		{Action: policy.ExecDeny, Program: "rm", Args: []string{"-r", "keep"}},
		{Action: policy.ExecDeny, Program: "kill", Args: []string{"-9"}},
		{Action: policy.ExecAsk, Program: "git", Args: []string{"push"}},
		{Action: policy.ExecAsk, Program: "python3", Interactive: true},
	}
	guardWith := func(mode string, watch bool) *WorkspaceGuard {
		return f.guard(func(o *Options) {
			o.Policy = rulesProfile(rules...)
			o.Policy.Sandbox.Mode = mode
			o.ExecWatch = watch
		})
	}
	watched := guardWith(policy.SandboxOn, true)
	required := guardWith(policy.SandboxRequired, true)
	off := guardWith(policy.SandboxOff, true)
	noListener := guardWith(policy.SandboxOn, false)
	mktemp := `d=$(mktemp -d); rm -r $d`
	for _, tc := range []struct {
		g    *WorkspaceGuard
		cmd  string
		want adapter.Action
	}{
		{watched, mktemp, adapter.Allow},
		{required, mktemp, adapter.Allow},
		{watched, `d=$(mktemp -d); touch "$d/f"; rm -r "$d"`, adapter.Allow},
		{watched, `rm -r "$@"`, adapter.Allow},
		{watched, `o=$(printf %s -rf); rm $o x`, adapter.Allow},
		{watched, `ls | xargs rm -r`, adapter.Allow},
		{watched, `git $cmd`, adapter.Allow},
		{watched, `rm -rf $d`, adapter.Deny},
		{watched, `rm -r keep`, adapter.Deny},
		{watched, `rm -r keep $d`, adapter.Deny},
		{watched, `kill $sig 1`, adapter.Deny},
		{watched, `cp /bin/rm ./r2; ./r2 $d`, adapter.Deny},
		{watched, `python3 $x`, adapter.Ask},
		{off, mktemp, adapter.Deny},
		{off, `git $cmd`, adapter.Ask},
		{noListener, mktemp, adapter.Deny},
	} {
		if d := check(tc.g, execTool, cmdArgs(tc.cmd)); d.Action != tc.want {
			t.Errorf("Check(%q), sandbox %s, listener %v = %v (%s), want %v", tc.cmd, tc.g.sandbox.SandboxMode(), tc.g.execWatch, d.Action, d.Reason, tc.want)
		}
	}
	// A plugin the host cannot vouch for may not supervise anything.
	d := watched.Check(context.Background(), adapter.GuardRequest{Spec: execTool, Args: cmdArgs(mktemp), Session: session.New("s")})
	if d.Action != adapter.Deny {
		t.Errorf("Check(%q) from an unpinned plugin = %v (%s), want deny", mktemp, d.Action, d.Reason)
	}
	// What the supervisor then asks: the execve with its real arguments.
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"rm", "-r", "/tmp/tmp.x1"}, policy.ExecAllow},
		{[]string{"rm", "-r", "keep"}, policy.ExecDeny},
		{[]string{"rm", "-rf", "x"}, policy.ExecDeny},
		{[]string{"rm", "--r", "--f", "x"}, policy.ExecDeny},
	} {
		if got, _ := watched.JudgeExec("/usr/bin/rm", tc.argv, nil, false); got != tc.want {
			t.Errorf("JudgeExec(rm, %q) = %s, want %s", tc.argv, got, tc.want)
		}
	}
}
