package guard

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

// Bounds of one analysis; past them the command asks.
const (
	maxScriptDepth = 8    // nested bash -c / eval / wrappers
	maxBraceWords  = 64   // words one brace expansion may yield
	maxWords       = 4096 // words judged in one command
)

// unknownMark stands for the part of a word only known when the command
// runs; a shell word can never hold a NUL byte.
const unknownMark = "\x00"

// script is what the guard learns from one command line.
type script struct {
	// parseErr is why the command does not parse, nil when it does.
	parseErr error
	// paths are the words (and parts of words) that name paths: absolute,
	// under a home folder, or relative; judged against the workspace.
	paths []string
	// writes are the paths the command may write: named by a whole word
	// (or a whole part of one between separators) of a program the
	// read-only classifier does not call a reader, or by an output
	// redirection. The others are a reader's, an input's, or the folder
	// before a part only known when the command runs: an approval lets it
	// read them alone.
	writes map[string]bool
	// calls are the simple commands the script runs, wrappers unwrapped.
	calls []call
	// unknown says why some program cannot be known before the command runs.
	unknown []string
	// readOnly is the classifier's verdict on the whole script.
	readOnly bool
	// strict says why some program cannot be known, where that only
	// matters under a deny rule (a script file that cannot be read).
	strict []string
	// pathUnknown says why some relative name cannot be judged.
	pathUnknown []string
	// copied are files the command copies, links or moves (absolute,
	// as named): a denied program's file copied is the program run.
	copied []string
	// bound says what of the command passed a bound of the guard's (see
	// bound.go); "" when nothing did. The command is refused.
	bound string
}

// arg is one rendered shell word.
type arg struct {
	// text is the word after quote removal and the expansions the guard
	// can do (~, $HOME, $PWD, $TMPDIR); other expansions are unknownMark.
	text string
	// static says the word has no unknown part.
	static bool
	// glob says the word has an unquoted glob character.
	glob bool
}

// call is one simple command.
type call struct {
	// prog is the program's basename.
	prog string
	// names are the other names the program goes by (hash -p NAME's
	// target, a shebang's interpreter).
	names []string
	// files are the files the program may be (stat'ed, symlinks
	// followed), to match a rule's program by device and inode or content.
	files []policy.ExecFile
	// args are the arguments after the program.
	args []arg
	// stdinFed says the command's standard input is a pipe, a file or a
	// here-document, not the terminal: no REPL reads what is typed next.
	stdinFed bool
	// copied is the file a copy of the rule's program comes from, for
	// the calls a copy stands for.
	copied string
}

// analyzer walks one command line.
type analyzer struct {
	ws, home string
	// temp is the session's own temp folder: the command's TMPDIR, and
	// its /tmp where it stands for it (paths stay as the command names
	// them: under /tmp).
	temp  *sdk.TempFolder
	env   map[string]string
	s     *script
	words int
	// cwds are the folders the command may be in when a word is used:
	// the workspace and every static folder cd moved to (cd may fail, or
	// run in a subshell, so each is kept).
	cwds []string
	// cwdUnknown says cd moved to a folder only known when the command runs.
	cwdUnknown bool
	// pathDirs is the command's PATH as far as known.
	pathDirs []string
	// hashed maps names to the files hash -p bound them to.
	hashed map[string]string
	// fedStdin are the simple commands whose standard input is redirected
	// or piped; stdinFed is set while one of them is recorded.
	fedStdin map[*syntax.CallExpr]bool
	stdinFed bool
	// scriptReads counts the script files read; globs is what the globs
	// of copied files may still list.
	scriptReads int
	globs       *globBudget
	// parsed counts the bytes of the scripts parsed, script files aside;
	// braces the braces of the words brace-expanded, braceWords what each
	// word expanded to (its paths, then its command, use it).
	parsed, braces int
	braceWords     map[*syntax.Word][]*syntax.Word
	// scriptFiles > 0 while a script file is walked for its programs only:
	// its words are the script's business, its programs are the rules'.
	scriptFiles int
	// prefix is set while the token being added is cut at a part only
	// known when the command runs; reading while the words walked are a
	// reading program's arguments or an input redirection's.
	prefix, reading bool
}

// analyzeCommand parses cmd with bash syntax and reports its paths, its
// programs and whether it only reads. ws is the workspace (the command's
// folder), home the user's home, temp the session's own temp folder (nil:
// none).
func analyzeCommand(cmd, ws, home string, temp *sdk.TempFolder) *script {
	a := &analyzer{
		ws:       ws,
		home:     home,
		temp:     temp,
		env:      map[string]string{"PWD": ws, "HOME": home},
		s:        &script{writes: map[string]bool{}},
		cwds:     []string{ws},
		pathDirs: filepath.SplitList(hostPath()),
		hashed:   map[string]string{},
		fedStdin: map[*syntax.CallExpr]bool{},
		globs:    newGlobBudget(),

		braceWords: map[*syntax.Word][]*syntax.Word{},
	}
	if t := temp.TMPDIR(); t != "" {
		a.env["TMPDIR"] = t // what the shell plugin gives the command
	} else if t := os.Getenv("TMPDIR"); t != "" {
		a.env["TMPDIR"] = t
	}
	a.env["PATH"] = hostPath()
	f, err := a.parse(cmd)
	if be := (*boundError)(nil); errors.As(err, &be) {
		a.boundf("the command %s", be)
		return a.s
	}
	if err != nil {
		a.s.parseErr = err
		a.fallbackPaths(cmd)
		return a.s
	}
	a.walk(f, 0)
	a.s.readOnly = len(a.s.unknown) == 0 && readOnlyFile(f, a)
	if a.globs.exhausted() {
		a.unknownf("%s", globsUnjudged)
	}
	return a.s
}

// parse parses one script the command hands a shell (the command itself,
// bash -c, eval...) within the guard's bounds (see bound.go), all of them
// together within maxParsedBytes.
func (a *analyzer) parse(src string) (*syntax.File, error) {
	if a.scriptFiles > 0 {
		return parse(src)
	}
	if a.parsed += len(src); a.parsed > maxParsedBytes {
		return nil, &boundError{fmt.Sprintf("comes, with the scripts it hands bash -c, eval and the like, to more than %d bytes (2 MiB) to parse, past the guard's bound", maxParsedBytes)}
	}
	return parse(src)
}

// boundf records that the command passed a bound: it is refused.
func (a *analyzer) boundf(format string, args ...any) {
	if a.s.bound == "" {
		a.s.bound = fmt.Sprintf(format, args...)
	}
}

// fallbackPaths judges the whitespace-separated fields of a command that
// does not parse, so that its paths still show in the question.
func (a *analyzer) fallbackPaths(cmd string) {
	for _, f := range strings.Fields(cmd) {
		a.pathsOf(arg{text: strings.Trim(f, `'"`), static: true})
	}
}

func (a *analyzer) unknownf(format string, args ...any) {
	if a.scriptFiles > 0 {
		// A script file ran before this work without an ask; what it
		// hides matters only under a deny rule.
		a.strictf(format, args...)
		return
	}
	msg := fmt.Sprintf(format, args...)
	if !slices.Contains(a.s.unknown, msg) {
		a.s.unknown = append(a.s.unknown, msg)
	}
}

// walk visits every node of f: every word for paths (arguments,
// redirections, assignments, inside $(), subshells and pipelines), every
// simple command for its program.
func (a *analyzer) walk(f syntax.Node, depth int) {
	var visit func(n syntax.Node) bool
	visit = func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Stmt:
			if call, ok := x.Cmd.(*syntax.CallExpr); ok && slices.ContainsFunc(x.Redirs, a.stdinRedirect) {
				a.fedStdin[call] = true
			}
		case *syntax.BinaryCmd:
			if call, ok := x.Y.Cmd.(*syntax.CallExpr); ok && (x.Op == syntax.Pipe || x.Op == syntax.PipeAll) {
				a.fedStdin[call] = true
			}
		case *syntax.Redirect:
			if x.Word != nil {
				saved := a.reading
				a.reading = x.Op == syntax.RdrIn || x.Op == syntax.DplIn || x.Op == syntax.DplOut
				syntax.Walk(x.Word, visit)
				a.reading = saved
				if x.Op == syntax.RdrIn || x.Op == syntax.RdrInOut {
					if w := a.render(x.Word); w.static {
						a.copiedFile(w.text, w.glob)
					}
				}
			}
			if x.Hdoc != nil {
				// A here-document is data, but an unquoted one runs its
				// command substitutions.
				syntax.Walk(x.Hdoc, func(n syntax.Node) bool {
					switch n.(type) {
					case *syntax.CmdSubst, *syntax.ProcSubst:
						syntax.Walk(n, visit)
						return false
					}
					return true
				})
			}
			return false
		case *syntax.Word:
			for _, w := range a.expandBraces(x) {
				a.pathsOf(a.render(w))
			}
		case *syntax.CallExpr:
			// Its words first, then its effect (cd, PATH=, hash -p) on
			// the words after it.
			saved := a.reading
			a.reading = false
			for _, as := range x.Assigns {
				syntax.Walk(as, visit)
			}
			a.reading = a.scriptFiles == 0 && readOnlyCall(x, a)
			for _, w := range x.Args {
				syntax.Walk(w, visit)
			}
			a.reading = saved
			a.callExpr(x, depth)
			return false
		case *syntax.DeclClause:
			for _, as := range x.Args {
				syntax.Walk(as, visit)
			}
			if x.Variant.Value == "export" || x.Variant.Value == "declare" || x.Variant.Value == "typeset" {
				for _, as := range x.Args {
					if as.Name != nil && as.Name.Value == "PATH" && !as.Naked {
						a.setPath(as.Value)
					}
				}
			}
			return false
		}
		return true
	}
	syntax.Walk(f, visit)
}

// expandBraces returns the words a brace expansion yields ({/etc/x,y} is
// two words), w itself when it has none.
func (a *analyzer) expandBraces(w *syntax.Word) []*syntax.Word {
	hasBrace := slices.ContainsFunc(w.Parts, func(p syntax.WordPart) bool {
		l, ok := p.(*syntax.Lit)
		return ok && strings.Contains(l.Value, "{")
	})
	if !hasBrace {
		return []*syntax.Word{w}
	}
	if ws, ok := a.braceWords[w]; ok {
		return ws
	}
	ws := a.braceExpand(w)
	a.braceWords[w] = ws
	return ws
}

// braceExpand expands the braces of w, within the guard's bounds.
func (a *analyzer) braceExpand(w *syntax.Word) []*syntax.Word {
	braces := 0
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			braces += strings.Count(l.Value, "{")
		}
	}
	if braces > maxWordBraces {
		msg := fmt.Sprintf("a word of the command holds %d braces, past the guard's bound of %d for brace expansion", braces, maxWordBraces)
		if a.scriptFiles > 0 {
			a.strictf("%s", msg)
		} else {
			a.boundf("%s", msg)
		}
		return []*syntax.Word{w}
	}
	if a.braces += braces; a.braces > maxCommandBraces {
		a.unknownf("the command has more than %d braces to expand", maxCommandBraces)
		return []*syntax.Word{w}
	}
	cp := &syntax.Word{Parts: slices.Clone(w.Parts)}
	if !syntax.SplitBraces(cp) {
		return []*syntax.Word{w}
	}
	var out []*syntax.Word
	for bw, err := range expand.BracesSeq(nil, cp) {
		if err != nil || len(out) == maxBraceWords {
			a.unknownf("a brace expansion yields more than %d words", maxBraceWords)
			break
		}
		out = append(out, bw)
	}
	if len(out) == 0 {
		return []*syntax.Word{w}
	}
	return out
}

// render does quote removal and the expansions the guard can know.
func (a *analyzer) render(w *syntax.Word) arg {
	var b strings.Builder
	r := arg{static: true}
	for i, p := range w.Parts {
		a.part(&b, &r, p, i == 0, len(w.Parts) > 1, false)
	}
	r.text = b.String()
	return r
}

func (a *analyzer) part(b *strings.Builder, r *arg, p syntax.WordPart, first, more, dq bool) {
	unknown := func() {
		b.WriteString(unknownMark)
		r.static = false
	}
	switch x := p.(type) {
	case *syntax.Lit:
		v := x.Value
		if dq {
			b.WriteString(unescapeDQ(v))
			return
		}
		if first && strings.HasPrefix(v, "~") {
			var ok bool
			if v, ok = a.tilde(v); !ok {
				unknown()
				return
			}
		}
		v, glob := unescapeLit(v)
		r.glob = r.glob || glob
		b.WriteString(v)
	case *syntax.SglQuoted:
		v := x.Value
		if x.Dollar {
			if f, _, err := expand.Format(nil, v, nil); err == nil {
				v = f
			}
			v, _, _ = strings.Cut(v, "\x00")
		}
		b.WriteString(v)
	case *syntax.DblQuoted:
		for _, q := range x.Parts {
			a.part(b, r, q, false, true, true)
		}
	case *syntax.ParamExp:
		if v, ok := a.param(x); ok {
			b.WriteString(v)
			return
		}
		unknown()
	case *syntax.CmdSubst:
		if isPwd(x) {
			b.WriteString(a.ws)
			return
		}
		unknown()
	case *syntax.ExtGlob:
		r.glob = true
		b.WriteString(x.Op.String() + x.Pattern.Value + ")")
	default: // arithmetic, process substitution
		unknown()
	}
}

// tilde expands the tilde prefix of an unquoted leading literal.
func (a *analyzer) tilde(v string) (string, bool) {
	prefix, rest, _ := strings.Cut(v, "/")
	if strings.Contains(v, "/") {
		rest = "/" + rest
	}
	switch prefix {
	case "~":
		if a.home == "" {
			return "", false
		}
		return a.home + rest, true
	case "~+":
		return a.ws + rest, true
	case "~-":
		return "", false // $OLDPWD
	}
	if h := userHome(prefix[1:]); h != "" {
		return h + rest, true
	}
	return "", false
}

// param expands $NAME and ${NAME} for the variables the guard knows.
func (a *analyzer) param(x *syntax.ParamExp) (string, bool) {
	if x.Param == nil || x.Excl || x.Length || x.Width || x.Index != nil || x.Slice != nil ||
		x.Repl != nil || x.Exp != nil || x.Names != 0 || x.NestedParam != nil || len(x.Modifiers) > 0 {
		return "", false
	}
	v, ok := a.env[x.Param.Value]
	return v, ok && v != ""
}

// isPwd reports a $(pwd) or `pwd` substitution.
func isPwd(cs *syntax.CmdSubst) bool {
	if len(cs.Stmts) != 1 {
		return false
	}
	c, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) != 1 || len(c.Assigns) > 0 || len(cs.Stmts[0].Redirs) > 0 {
		return false
	}
	return c.Args[0].Lit() == "pwd"
}

// unescapeLit removes the backslashes of an unquoted literal and reports
// an unquoted glob character.
func unescapeLit(s string) (string, bool) {
	if !strings.ContainsAny(s, `\*?[`) {
		return s, false
	}
	var b strings.Builder
	glob := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		case c == '*' || c == '?' || c == '[':
			glob = true
		}
		b.WriteByte(c)
	}
	return b.String(), glob
}

// unescapeDQ removes the backslashes that escape inside double quotes.
func unescapeDQ(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
				c = s[i]
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// pathSeps split a word into the tokens that may name a path on their
// own: "--out=/x", "PATH=/a:/b", "open('/x')", "a,/b".
const pathSeps = " \t\n'\"=:,;()<>|&{}[]`"

// pathsOf records the tokens of w that name a path.
func (a *analyzer) pathsOf(w arg) {
	if a.scriptFiles > 0 {
		return
	}
	a.words++
	if a.words > maxWords {
		if a.words == maxWords+1 {
			a.unknownf("the command has more than %d words to check", maxWords)
		}
		return
	}
	text := w.text
	a.token(text, true)
	if i := strings.Index(strings.ToLower(text), "file://"); i >= 0 {
		a.token(text[i+len("file://"):], true)
	}
	if !strings.ContainsAny(text, pathSeps) {
		return
	}
	start, afterColon := 0, false
	for i := 0; i <= len(text); i++ {
		if i < len(text) && !strings.ContainsRune(pathSeps, rune(text[i])) {
			continue
		}
		if i > start && !(afterColon && strings.HasPrefix(text[start:i], "//")) {
			a.token(text[start:i], false)
		}
		afterColon = i < len(text) && text[i] == ':'
		start = i + 1
	}
}

// token records one token if it may name a path. A token that begins with
// an expansion the guard cannot know is not judged: it is as unknown to
// the guard as a relative name.
func (a *analyzer) token(t string, whole bool) {
	if i := strings.Index(t, unknownMark); i >= 0 {
		t = t[:i]
		if t == "" {
			return
		}
		a.prefix = true
		defer func() { a.prefix = false }()
	}
	// A short option glued to its path: -o/etc/x, -I/usr/include.
	if len(t) > 2 && t[0] == '-' && t[1] != '-' {
		if i := strings.IndexByte(t, '/'); i > 1 && isLetters(t[1:i]) {
			a.add(t[i:])
		}
		return
	}
	if strings.HasPrefix(t, "-") {
		return
	}
	if !whole && t == "" {
		return
	}
	a.add(t)
}

// add records p; a relative name is recorded once per folder the command
// may be in, joined as named (the kernel resolves "e/.." after "e").
func (a *analyzer) add(p string) {
	if p == "" {
		return
	}
	if filepath.IsAbs(p) {
		a.addPath(p)
		return
	}
	if a.cwdUnknown {
		a.unknownPath(p)
	}
	for _, c := range a.cwds {
		if c == a.ws {
			a.addPath(p)
		} else {
			a.addPath(joinRaw(c, p))
		}
	}
}

func (a *analyzer) addPath(p string) {
	if !slices.Contains(a.s.paths, p) {
		a.s.paths = append(a.s.paths, p)
	}
	if !a.prefix && !a.reading {
		a.s.writes[p] = true
	}
}

// unknownPath records that relative name p cannot be judged: cd moved to a
// folder only known when the command runs.
func (a *analyzer) unknownPath(p string) {
	msg := fmt.Sprintf("the command changes to a folder only known when it runs, so %q cannot be judged", p)
	if !slices.Contains(a.s.pathUnknown, msg) {
		a.s.pathUnknown = append(a.s.pathUnknown, msg)
	}
}

func isLetters(s string) bool {
	for _, c := range s {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

// callExpr records the simple command x.
func (a *analyzer) callExpr(x *syntax.CallExpr, depth int) {
	saved := a.pathDirs
	for _, as := range x.Assigns {
		if as.Name != nil && as.Name.Value == "PATH" {
			a.setPath(as.Value)
		}
	}
	if len(x.Args) == 0 {
		return // a plain assignment stays for the commands after it
	}
	var argv []arg
	for _, w := range x.Args {
		for _, bw := range a.expandBraces(w) {
			argv = append(argv, a.render(bw))
		}
	}
	a.stdinFed = a.fedStdin[x]
	a.exec(argv, depth)
	a.stdinFed = false
	a.pathDirs = saved
}

// stdinRedirect reports a redirection of standard input away from the
// terminal: a here-document, a here-string, a regular file. A device (a
// symlink to /dev/tty too), a file not there yet or a name only known at
// run time may be the terminal again.
func (a *analyzer) stdinRedirect(r *syntax.Redirect) bool {
	if r.N != nil && r.N.Value != "0" {
		return false
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return true
	case syntax.RdrIn, syntax.RdrInOut:
		w := a.render(r.Word)
		if !w.static {
			return false
		}
		for _, p := range a.candidates(w.text) {
			if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
				return false
			}
		}
		return true
	}
	return false
}

// inner parses a script a command runs (bash -c, eval, trap) and walks it.
func (a *analyzer) inner(src arg, what string, depth int) {
	if !src.static {
		a.unknownf("the script %s runs is only known when the command runs", what)
		return
	}
	if depth+1 > maxScriptDepth {
		a.unknownf("scripts are nested more than %d deep", maxScriptDepth)
		return
	}
	f, err := a.parse(src.text)
	if be := (*boundError)(nil); errors.As(err, &be) {
		if a.scriptFiles > 0 {
			// A script file's, not the model's: as one that does not parse.
			a.strictf("the script %s runs %s", what, be)
		} else {
			a.boundf("the script %s runs %s", what, be)
		}
		return
	}
	if err != nil {
		a.unknownf("the script %s runs does not parse: %v", what, err)
		a.fallbackPaths(src.text)
		return
	}
	a.walk(f, depth+1)
}

// display shows a word in a message, its unknown parts as "$…".
func display(w arg) string {
	return strings.ReplaceAll(w.text, unknownMark, "$…")
}

// exec records the program of argv and unwraps what it runs in turn.
func (a *analyzer) exec(argv []arg, depth int) {
	if len(argv) == 0 {
		return
	}
	if depth > maxScriptDepth {
		a.unknownf("commands are wrapped more than %d deep", maxScriptDepth)
		return
	}
	p := argv[0]
	switch {
	case !p.static:
		a.unknownf("the program %q is only known when the command runs", display(p))
		return
	case p.glob && canMatch(p.text):
		a.unknownf("the program %q is a glob pattern", p.text)
		return
	case p.text == "":
		return
	}
	prog := path.Base(p.text)
	args := argv[1:]
	c := call{prog: prog, args: args, stdinFed: a.stdinFed}
	a.identify(&c, p.text, depth)
	a.s.calls = append(a.s.calls, c)
	a.copies(prog, args)
	unwrap(a, prog, args, depth)
}

// canMatch reports a glob pattern bash would expand: a * or ?, or a [
// closed by a later ]. A lone [ (the test command) is a plain word.
func canMatch(p string) bool {
	if strings.ContainsAny(p, "*?") {
		return true
	}
	i := strings.IndexByte(p, '[')
	return i >= 0 && strings.IndexByte(p[i+1:], ']') >= 0
}
