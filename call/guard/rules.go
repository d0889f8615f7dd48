package guard

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/yagent/yagent/policy"
)

// ruleVerdict is what the exec rules say about one simple command.
type ruleVerdict struct {
	action string // policy.ExecAllow (also: no rule), policy.ExecAsk or policy.ExecDeny
	rule   policy.ExecRule
}

// matchRules applies the profile's exec rules to c: a deny rule that
// matches wins; otherwise the matching rule with the most arguments
// decides, ask winning a tie; no match allows (there is no blacklist). An
// argument only known when the command runs may be whatever an ask or deny
// rule names, never what an allow rule names; with later, the exec
// supervisor judges c's execve with its real arguments, and such an
// argument matches nothing here.
//
// Among rules that decide alike, one naming the program the command calls
// is preferred to one matched only by the file it runs, so the message
// speaks of the program the model wrote. m knows the ask and deny rules'
// programs by their files.
func matchRules(rules []policy.ExecRule, c call, m *policy.ProgramMatcher, later bool) ruleVerdict {
	files := m.Match(nil, c.files)
	best := ruleVerdict{action: policy.ExecAllow}
	bestLen := -1
	var deny *policy.ExecRule
	for i, r := range rules {
		if !progMatches(r, c, files) || !argsMatch(r, c, later) {
			continue
		}
		if r.Action == policy.ExecDeny {
			if deny == nil || byName(r, c) && !byName(*deny, c) {
				deny = &rules[i]
			}
			continue
		}
		n := len(r.Args)
		switch {
		case n > bestLen,
			n == bestLen && r.Action == policy.ExecAsk && best.action != policy.ExecAsk,
			n == bestLen && r.Action == best.action && byName(r, c) && !byName(best.rule, c):
			best, bestLen = ruleVerdict{action: r.Action, rule: r}, n
		}
	}
	if deny != nil {
		return ruleVerdict{action: policy.ExecDeny, rule: *deny}
	}
	return best
}

// byName reports whether c calls r's program by its name.
func byName(r policy.ExecRule, c call) bool {
	name := path.Base(r.Program)
	return c.prog == name || slices.Contains(c.names, name)
}

// progMatches reports whether c runs r's program: by name, or for an ask
// or deny rule by the file it runs (a path, a symlink, a hard link, a
// copy hash -p bound), files being the rule programs c's files are.
func progMatches(r policy.ExecRule, c call, files []string) bool {
	if byName(r, c) {
		return true
	}
	return r.Action != policy.ExecAllow && slices.Contains(files, path.Base(r.Program))
}

// argsMatch reports whether c's arguments hold what r names: r's options
// as a set (-rf = -fr = -r -f = --recursive --force = --r --f, anywhere
// before "--", as GNU programs permute and abbreviate), and r's other
// words as a prefix of c's operands. An interactive rule also needs the
// call to start a REPL. For an ask or deny rule, an option the program
// would not read as one of its own, or an argument only known when the
// command runs (unless later: the supervisor sees it), may be any option
// r names.
func argsMatch(r policy.ExecRule, c call, later bool) bool {
	return matchArgs(r, c, later, false)
}

// matchArgs is argsMatch; literal holds c to its static words, as the
// program reads them: no odd option or unknown argument stands for
// another.
func matchArgs(r policy.ExecRule, c call, later, literal bool) bool {
	strict := r.Action == policy.ExecAllow
	later = later && !r.Interactive
	got := parseArgv(c.prog, r.Program, c.args)
	if r.Interactive && (c.stdinFed || !policy.Interactive(path.Base(r.Program), policyArgs(c.args))) {
		return false
	}
	want := parseArgv(c.prog, r.Program, staticArgs(r.Args))
	if got.vague && strict {
		if len(r.Args) > 0 {
			return false
		}
	}
	loose := !strict && !literal && (len(got.odd) > 0 || got.vague && !later)
	for l := range want.shorts {
		if !got.shorts[l] && !(!strict && got.maybe[l]) && !loose {
			return false
		}
	}
	for _, l := range want.longs {
		if !got.hasLong(l, strict) && !loose {
			return false
		}
	}
	return operandsMatch(want.operands, got, strict, later || literal)
}

// policyArgs are args as the command classifier reads them.
func policyArgs(args []arg) []policy.Arg {
	out := make([]policy.Arg, len(args))
	for i, w := range args {
		out[i] = policy.Arg{Text: w.text, Static: w.static}
	}
	return out
}

func staticArgs(words []string) []arg {
	out := make([]arg, len(words))
	for i, w := range words {
		out[i] = arg{text: w, static: true}
	}
	return out
}

// argv is a command's arguments sorted into options and operands.
type argv struct {
	shorts map[rune]bool
	// longs are long options without a short form, without "--": as the
	// program's table names them (exact), else as written.
	longs []string
	exact map[string]bool
	// maybe are short forms a long option may stand for without the
	// guard knowing it does: a prefix of several long options of a
	// program whose table is partial. Ask and deny rules count them.
	maybe map[rune]bool
	// odd are the long options, as written, that the program's table
	// does not know, or knows as the prefix of several options: to an ask
	// or deny rule they may be any option.
	odd      []string
	operands []arg
	// loose are the operands when every word after an option might be
	// that option's value, for ask and deny rules.
	loose []arg
	// vague says some argument is only known when the command runs.
	vague bool
	// words are every static word that starts with "-", whole, for the
	// programs whose options are long with one dash (find -delete).
	words []string
}

func (a argv) hasLong(name string, strict bool) bool {
	for _, l := range a.longs {
		// A long option as written may abbreviate the rule's (GNU
		// getopt_long takes any unambiguous prefix: --r is --recursive).
		if l == name || !strict && !a.exact[l] && l != "" && strings.HasPrefix(name, l) {
			return true
		}
	}
	return false
}

// parseArgv sorts args of prog (a rule on program rprog) into options
// and operands, reading long options as the program's table has them
// (optionTables; for git, the table of the subcommand its first operand
// names) and mapping them to their short forms.
func parseArgv(prog, rprog string, args []arg) argv {
	out := argv{shorts: map[rune]bool{}, exact: map[string]bool{}, maybe: map[rune]bool{}}
	base := path.Base(rprog)
	table := longToShort[base]
	opts := programTables[base]
	same := shortAliases[base]
	values := valueOpts[base]
	oneDash := singleDash[base]
	git, sub := base == "git", ""
	afterOpt := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.static {
			out.vague = true
			out.operands = append(out.operands, w)
			out.loose = append(out.loose, w)
			afterOpt = false
			if git && sub == "" {
				sub = unknownMark // the subcommand is only known when the command runs
			}
			continue
		}
		t := w.text
		switch {
		case t == "--":
			for _, o := range args[i+1:] {
				out.vague = out.vague || !o.static
			}
			out.operands = append(out.operands, args[i+1:]...)
			out.loose = append(out.loose, args[i+1:]...)
			return out
		case strings.HasPrefix(t, "--") && !oneDash:
			name, _, eq := strings.Cut(t[2:], "=")
			out.words = append(out.words, t)
			afterOpt = true
			switch {
			case git && sub == "":
				// git's own options, which it takes only in full
				out.longs = append(out.longs, name)
				if slices.Contains(gitValueOpts, name) && !eq && i+1 < len(args) {
					i++
				}
			case opts != nil:
				o, ok, _ := opts.resolve(name)
				switch {
				case !ok:
					out.odd = append(out.odd, t)
					out.longs = append(out.longs, name)
				case o.short != 0:
					out.shorts[o.short] = true
				default:
					out.longs = append(out.longs, o.name)
					out.exact[o.name] = true
				}
			default:
				if s, ok := table[name]; ok {
					out.shorts[s] = true
					continue
				}
				for long, s := range table {
					if strings.HasPrefix(long, name) {
						out.maybe[s] = true
					}
				}
				out.longs = append(out.longs, name)
			}
		case len(t) > 1 && t[0] == '-':
			out.words = append(out.words, t)
			if oneDash {
				// -race and --race are one option to such programs.
				name, _, _ := strings.Cut(strings.TrimLeft(t, "-"), "=")
				out.longs = append(out.longs, name)
				afterOpt = true
				continue
			}
			for j, c := range t[1:] {
				if s, ok := same[c]; ok {
					c = s
				}
				out.shorts[c] = true
				if strings.ContainsRune(values, c) {
					if j+2 == len(t) && i+1 < len(args) {
						i++ // the option's value is the next word
					}
					break
				}
			}
			afterOpt = true
		default:
			if git && sub == "" {
				sub = t
				opts = gitSubTables[t]
			}
			out.operands = append(out.operands, w)
			if !afterOpt {
				out.loose = append(out.loose, w)
			}
			afterOpt = false
		}
	}
	return out
}

// operandsMatch reports whether want is a prefix of got's operands (for
// ask and deny, also of the operands read loosely); an unknown word
// matches any word of an ask or deny rule, unless known: it is judged
// where it is known, or held to what the command spells.
func operandsMatch(want []arg, got argv, strict, known bool) bool {
	prefix := func(have []arg) bool {
		if len(have) < len(want) {
			return false
		}
		for i, w := range want {
			h := have[i]
			if !h.static {
				if strict || known {
					return false
				}
				continue
			}
			if h.text != w.text {
				return false
			}
		}
		return true
	}
	return prefix(got.operands) || !strict && prefix(got.loose)
}

// longToShort maps long options of programs without an option table to
// their short form, so a rule's -a also holds --archive; a programs of
// optionTables is read by its table instead.
var longToShort = map[string]map[string]rune{
	"git":   {"force": 'f', "delete": 'd', "all": 'a', "dry-run": 'n', "quiet": 'q', "verbose": 'v', "recursive": 'r', "message": 'm', "patch": 'p', "interactive": 'i', "hard": 'H'},
	"rsync": {"recursive": 'r', "archive": 'a', "delete": 'D', "verbose": 'v', "compress": 'z'},
	"tar":   {"extract": 'x', "create": 'c', "file": 'f', "gzip": 'z', "verbose": 'v', "directory": 'C'},
	"kill":  {"signal": 's'},
}

// shortAliases are short options that mean the same: rm -R is rm -r.
var shortAliases = map[string]map[rune]rune{
	"rm":  {'R': 'r'},
	"cp":  {'r': 'R'},
	"sed": {'r': 'E'},
}

// valueOpts are the short options of common programs that take a value:
// in "-m msg" the msg is not an operand, in "-mrf" the rf is not options.
var valueOpts = map[string]string{
	"git":   "Cc",
	"curl":  "oTdXHFuAeErwx",
	"tar":   "fCT",
	"cp":    "tS",
	"mv":    "tS",
	"ln":    "tS",
	"chown": "",
	"sort":  "otkS",
	"sed":   "efl",
	"kill":  "sn",
}

// singleDash are programs whose long options take one dash (find -delete),
// so a word is never split into letters.
var singleDash = map[string]bool{"find": true, "java": true, "go": true, "gdb": true, "sqlite3": true, "xdotool": true}

// ruleText shows a rule as a profile line would say it.
func ruleText(r policy.ExecRule) string {
	s := fmt.Sprintf("{action: %s, program: %s", r.Action, r.Program)
	if len(r.Args) > 0 {
		s += ", args: [" + strings.Join(r.Args, ", ") + "]"
	}
	if r.Interactive {
		s += ", interactive: true"
	}
	return s + "}"
}
