package guard

import (
	"fmt"
	"path"
	"strings"

	"github.com/yagent/yagent/host/config"
)

// ruleVerdict is what the exec rules say about one simple command.
type ruleVerdict struct {
	action string // config.ExecAllow (also: no rule), ExecAsk or ExecDeny
	rule   config.ExecRule
}

// matchRules applies the profile's exec rules to c: a deny rule that
// matches wins; otherwise the matching rule with the longest argv prefix
// decides, ask winning a tie; no match allows (there is no blacklist). An
// argument only known when the command runs matches the prefix of an ask or
// deny rule, never of an allow rule.
func matchRules(rules []config.ExecRule, c call) ruleVerdict {
	best := ruleVerdict{action: config.ExecAllow}
	bestLen := -1
	for _, r := range rules {
		if path.Base(r.Program) != c.prog || !argsMatch(r, c.args) {
			continue
		}
		if r.Action == config.ExecDeny {
			return ruleVerdict{action: config.ExecDeny, rule: r}
		}
		if n := len(r.Args); n > bestLen || (n == bestLen && r.Action == config.ExecAsk) {
			best, bestLen = ruleVerdict{action: r.Action, rule: r}, n
		}
	}
	return best
}

func argsMatch(r config.ExecRule, args []arg) bool {
	if len(args) < len(r.Args) {
		return false
	}
	for i, want := range r.Args {
		a := args[i]
		if !a.static {
			if r.Action == config.ExecAllow {
				return false
			}
			continue
		}
		if a.text != want {
			return false
		}
	}
	return true
}

// ruleText shows a rule as a profile line would say it.
func ruleText(r config.ExecRule) string {
	s := fmt.Sprintf("{action: %s, program: %s", r.Action, r.Program)
	if len(r.Args) > 0 {
		s += ", args: [" + strings.Join(r.Args, ", ") + "]"
	}
	return s + "}"
}
