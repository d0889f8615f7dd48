package execwatch

import "github.com/yagent/yagent/sdk"

// Matcher is a placeholder until program identification lands.
type Matcher struct{ progs []sdk.ExecProgram }

// NewMatcher returns a Matcher over progs.
func NewMatcher(progs []sdk.ExecProgram) *Matcher { return &Matcher{progs: progs} }

// Match returns every rule program: nothing is identified yet.
func (m *Matcher) Match(e Exec) []string {
	var out []string
	for _, p := range m.progs {
		out = append(out, p.Name)
	}
	return out
}
