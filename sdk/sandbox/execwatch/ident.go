package execwatch

import (
	"os"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// Matcher finds the rule programs an exec may be, with policy's program
// matcher: the one the guard judges command lines with. It is safe for
// concurrent use.
type Matcher struct {
	m *policy.ProgramMatcher
}

// NewMatcher builds a matcher for the programs of the profile's ask and
// deny exec rules.
func NewMatcher(progs []sdk.ExecProgram) *Matcher {
	rules := make([]policy.RuleProgram, 0, len(progs))
	for _, p := range progs {
		r := policy.RuleProgram{Name: p.Name}
		for _, f := range p.Files {
			r.Files = append(r.Files, policy.RuleFile{Path: f.Path, Size: f.Size, SHA256: f.SHA256})
		}
		rules = append(rules, r)
	}
	return &Matcher{m: policy.NewProgramMatcher(rules, nil)}
}

// Match returns the rule programs e may be, in rule order: by the basename
// of its Path, of argv[0] and of each interpreter, and by file identity (the
// same file as a rule's, or a byte-identical copy of one under any name; a
// modified copy is another program). An Unidentified exec may be any of
// them. Nil means no rule concerns e.
func (m *Matcher) Match(e Exec) []string {
	if m == nil {
		return nil
	}
	if e.Unidentified != "" {
		return m.m.Programs()
	}
	names := []string{e.Path}
	if len(e.Argv) > 0 {
		names = append(names, e.Argv[0])
	}
	names = append(names, e.Interpreters...)
	held := e.files
	if held == nil {
		// An Exec built by hand: open its files by name.
		for _, p := range append([]string{e.Path}, e.Interpreters...) {
			if f, err := os.Open(p); err == nil {
				defer f.Close()
				held = append(held, f)
			}
		}
	}
	var files []policy.ExecFile
	for _, f := range held {
		if pf, ok := policy.OpenedExecFile(f); ok {
			files = append(files, pf)
		}
	}
	return m.m.Match(names, files)
}
