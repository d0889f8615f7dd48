package guard

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bounds of what the guard hands mvdan.cc/sh. Its parser recurses at each
// level of nesting, and syntax.Walk at each level of the tree; a goroutine
// whose stack passes 1 GB ends the process, and no recover catches that:
// 120,000 levels of $(( or ${a[ do it (fewer under the race detector), in
// a 400 KB command. No real command comes near these bounds; what passes
// one is refused.
const (
	// maxShellBytes bounds one command, and each script the guard parses
	// again (bash -c, eval, a script file).
	maxShellBytes = 1 << 20
	// maxShellDepth bounds the nesting the pre-scan counts before the
	// parse (scanNesting): at it the parser holds at most 9 MB of stack.
	maxShellDepth = 1000
	// maxShellTree bounds the depth of a parsed tree: the parser builds a
	// chain of |, && or || (and of arithmetic operators) without
	// recursing, but the walk recurses down it, a command a level.
	maxShellTree = 5000
	// maxParseFrames bounds the goroutine's stack while a parse runs
	// (about 20 MB), for any nesting the pre-scan does not count.
	maxParseFrames = 1 << 16
	// maxParsedBytes bounds all the parses of one command together: the
	// scripts a command hands bash -c or eval are words of its own, but
	// brace expansion repeats a word (eval "$x"{,}{,}{,}).
	maxParsedBytes = 2 << 20
	// maxWordBraces bounds the braces of one word that brace expansion
	// reads: syntax.SplitBraces takes time and memory quadratic in them
	// (1.5 GB for 8,000 unclosed), and expand.BracesSeq recurses once per
	// brace group and copies the rest of the word at each.
	maxWordBraces = 128
	// maxCommandBraces bounds the braces of all the words one command
	// brace-expands (16 ms a word of 128); past it the rest are judged
	// unexpanded, and the command asks.
	maxCommandBraces = 4096
)

// boundAdvice tells the model what to do with a call a bound refused.
const boundAdvice = "no real command comes near the guard's bounds, so it is not parsed; " +
	"split it into smaller commands, or write generated code or data to a file with write_file and run or read that file"

// boundError says what passed a bound; the text completes "the command"
// or "the script bash -c runs".
type boundError struct{ what string }

func (e *boundError) Error() string { return e.what }

var errParseFrames = &boundError{fmt.Sprintf("nests deeper than the guard parses (its parse passed %d stack frames)", maxParseFrames)}

// parse parses src as bash, within the bounds above: a *boundError when
// src passes one.
func parse(src string) (*syntax.File, error) {
	if len(src) > maxShellBytes {
		return nil, &boundError{fmt.Sprintf("is %d bytes long, past the guard's bound of %d bytes (1 MiB)", len(src), maxShellBytes)}
	}
	if err := scanNesting(src); err != nil {
		return nil, err
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(&frameReader{r: strings.NewReader(src)}, "")
	if be := (*boundError)(nil); errors.As(err, &be) {
		return nil, be
	}
	if err != nil {
		return nil, err
	}
	if treeDeeper(f, maxShellTree) {
		return nil, &boundError{fmt.Sprintf("has a syntax tree more than %d levels deep (a chain of |, && or || adds a level a command), past the guard's bound", maxShellTree)}
	}
	return f, nil
}

// frameReader hands the parser its input and fails the parse once the
// goroutine's stack holds more than maxParseFrames frames. The parser reads
// at most 1 KiB between two reads, and no byte makes it recurse by more
// than about 35 frames.
type frameReader struct{ r *strings.Reader }

func (f *frameReader) Read(b []byte) (int, error) {
	var pc [1]uintptr
	if runtime.Callers(maxParseFrames, pc[:]) > 0 {
		return 0, errParseFrames
	}
	return f.r.Read(b)
}

// treeDeeper reports whether f's tree is more than limit levels deep; it
// walks no deeper than that.
func treeDeeper(f *syntax.File, limit int) bool {
	depth, over := 0, false
	syntax.Walk(f, func(n syntax.Node) bool {
		switch {
		case n == nil:
			depth--
			return true
		case over || depth == limit:
			over = true
			return false
		}
		depth++
		return true
	})
	return over
}

// nestKind is what opened one level of nesting in the pre-scan.
type nestKind uint8

const (
	nestSubshell   nestKind = iota // ( as a command, <( and >(, @(
	nestArray                      // a=(: a word [ opens an index
	nestCmdSubst                   // $(
	nestBackquote                  // `
	nestBlock                      // { as a command
	nestCmdBraces                  // ${ cmd;}
	nestParam                      // ${
	nestDQ                         // "
	nestArith                      // $(( and ((, closed by ))
	nestArithBrack                 // $[, and an index [ in arithmetic or ${a[
	nestArithParen                 // ( in arithmetic
	nestSlice                      // ${a:offset:length}, closed by } with its ${
	nestLet                        // let's arguments, to the command's end
	nestTest                       // [[
	nestTestParen                  // ( in [[ ]]
	nestIf                         // if, closed by fi
	nestLoop                       // while, until, for, select: done
	nestCase                       // case: esac
	nestHeredoc                    // the body of an unquoted here-document
)

// nestLevel is one open level of the pre-scan.
type nestLevel struct {
	kind nestKind
	// held are the prefixes (time, !, a function's name()) of the command
	// this level opened in: the parser is inside them while it is open,
	// and the command goes on with them after it.
	held int
	// ops are the operators of this level the parser recurses on: in
	// arithmetic, unary ones, assignments, ?: and **; in [[ ]], && || !.
	ops int
	// pattern says a case reads a pattern, not a command.
	pattern bool
	// stage is where a ${ is: 0 before its name's end, 1 after its
	// index, 2 past its operator.
	stage uint8
	// outerBury is the scan's bury when this level opened.
	outerBury int
	// delim and dash are a here-document's end line and whether leading
	// tabs are stripped from it (<<-); rest are the here-documents whose
	// bodies follow its own.
	delim string
	dash  bool
	rest  []heredoc
}

// heredoc is a here-document whose body starts at the next newline.
type heredoc struct {
	delim        string
	dash, quoted bool
}

// nestScan is the pre-scan of one command: a single pass over its bytes,
// lexing as bash does as far as nesting goes (quotes, comments,
// here-documents, the keywords of compound commands), that counts the
// levels mvdan.cc/sh's parser recurses into.
type nestScan struct {
	src   string
	i     int
	stack []nestLevel
	// weight is the depth of the open levels, their held prefixes and
	// operators included.
	weight int
	// prefix counts the prefixes (time, coproc, !, function, name()) of
	// the command being read in the innermost level.
	prefix int
	// cmdPos says the next word is in command position, where a keyword is
	// one.
	cmdPos bool
	// funcName says the next word names a function (after "function").
	funcName bool
	// assign says the word being read is an assignment, after which a
	// word is still in command position; decl says the command is
	// declare, local, export, readonly or typeset: in both, name[ opens
	// an arithmetic index.
	assign, decl bool
	// operand says arithmetic expects an operand, so + - ! ~ are unary.
	operand bool
	// hdocs are the here-documents whose bodies have not started; the
	// first bury of them wait for a level to close, as the parser's
	// preNested buries them: a newline starts the bodies of the rest.
	hdocs []heredoc
	bury  int
	// bquotes counts the open backquotes.
	bquotes int
	// deepest is the deepest nesting seen.
	deepest int
}

// scanNesting returns a *boundError when src nests more than maxShellDepth
// levels deep, as mvdan.cc/sh's parser recurses: (, $(, `, {, ${, $((,
// ((, $[, [, [[, if, while, until, for, select, case, <(, >(, quotes
// inside these, a here-document's $( and the prefixes and operators the
// parser recurses on. It stops at the first level past the bound.
func scanNesting(src string) error {
	_, err := newNestScan(src).run()
	return err
}

func newNestScan(src string) *nestScan {
	// The parser drops NUL bytes and reads \r\n as \n.
	if strings.IndexByte(src, 0) >= 0 {
		src = strings.ReplaceAll(src, "\x00", "")
	}
	if strings.Contains(src, "\r\n") {
		src = strings.ReplaceAll(src, "\r\n", "\n")
	}
	return &nestScan{src: src, cmdPos: true}
}

// run scans to the end or the first level past the bound, and returns the
// deepest nesting seen.
func (s *nestScan) run() (int, error) {
	for s.i < len(s.src) {
		var err error
		switch s.top() {
		case nestDQ:
			err = s.dquoted()
		case nestHeredoc:
			err = s.heredocBody()
		case nestParam:
			err = s.param()
		case nestArith, nestArithBrack, nestArithParen, nestSlice, nestLet:
			err = s.arith()
		case nestTest, nestTestParen:
			err = s.test()
		default:
			err = s.command()
		}
		if err != nil {
			return s.deepest, err
		}
	}
	return s.deepest, nil
}

// top is the kind of the innermost open level; nestBlock stands for the
// command line itself.
func (s *nestScan) top() nestKind {
	if len(s.stack) == 0 {
		return nestBlock
	}
	return s.stack[len(s.stack)-1].kind
}

func (s *nestScan) topLevel() *nestLevel {
	if len(s.stack) == 0 {
		return nil
	}
	return &s.stack[len(s.stack)-1]
}

// over is the error for the level just counted at the bytes from s.i.
func (s *nestScan) over(what string) error {
	s.deepest = max(s.deepest, s.weight+s.prefix)
	if s.weight+s.prefix <= maxShellDepth {
		return nil
	}
	return &boundError{fmt.Sprintf("nests more than %d levels deep (%s at byte %d), past the guard's bound", maxShellDepth, what, s.i)}
}

// push opens a level of kind k at s.i, n bytes long, named what.
func (s *nestScan) push(k nestKind, n int, what string) error {
	s.stack = append(s.stack, nestLevel{kind: k, held: s.prefix, outerBury: s.bury})
	s.weight += 1 + s.prefix
	s.prefix = 0
	s.operand = true
	err := s.over("`" + what + "`")
	s.i += n
	switch k {
	case nestSubshell, nestCmdSubst, nestBackquote, nestBlock, nestCmdBraces, nestIf, nestLoop:
		s.cmdPos = true
	case nestCase:
		s.stack[len(s.stack)-1].pattern = true
	}
	switch k {
	case nestBackquote:
		s.bquotes++
		s.bury = len(s.hdocs)
	case nestSubshell, nestArray, nestCmdSubst, nestCmdBraces, nestArith, nestArithBrack, nestTest, nestLet:
		s.bury = len(s.hdocs)
	}
	return err
}

// pop closes the innermost level, n bytes long.
func (s *nestScan) pop(n int) {
	l := s.stack[len(s.stack)-1]
	s.stack = s.stack[:len(s.stack)-1]
	s.weight -= 1 + l.held + l.ops
	s.prefix, s.bury = l.held, l.outerBury
	if l.kind == nestBackquote {
		s.bquotes--
	}
	s.i += n
	s.cmdPos, s.operand = false, false
}

// op counts an operator of the innermost level the parser recurses on.
func (s *nestScan) op(what string) error {
	if l := s.topLevel(); l != nil {
		l.ops++
		s.weight++
	}
	return s.over(what)
}

// addPrefix counts a prefix of the command being read.
func (s *nestScan) addPrefix(what string) error {
	s.prefix++
	return s.over("`" + what + "`")
}

// endCommand is the end of a command: its prefixes are done with.
func (s *nestScan) endCommand() {
	s.prefix, s.funcName, s.cmdPos, s.assign, s.decl = 0, false, true, false, false
}

func (s *nestScan) at(off int) byte {
	if s.i+off < len(s.src) {
		return s.src[s.i+off]
	}
	return 0
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isMeta reports a byte that ends a word in a command.
func isMeta(c byte) bool {
	switch c {
	case ' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>':
		return true
	}
	return false
}

// skipSingle skips a single-quoted string whose quote is at s.i+off.
func (s *nestScan) skipSingle(off int) {
	if j := strings.IndexByte(s.src[s.i+off+1:], '\''); j >= 0 {
		s.i += off + j + 2
	} else {
		s.i = len(s.src)
	}
}

// skipANSI skips a $'...' string whose $ is at s.i.
func (s *nestScan) skipANSI() {
	for s.i += 2; s.i < len(s.src); s.i++ {
		switch s.src[s.i] {
		case '\\':
			s.i++
		case '\'':
			s.i++
			return
		}
	}
}

// backquote closes the innermost open backquote (bash ends it at the first
// unescaped one, whatever quotes lie between), or opens one.
func (s *nestScan) backquote() error {
	for j := len(s.stack) - 1; s.bquotes > 0 && j >= 0; j-- {
		if s.stack[j].kind == nestBackquote {
			for len(s.stack) > j+1 {
				s.pop(0)
			}
			s.pop(1)
			return nil
		}
	}
	return s.push(nestBackquote, 1, "`")
}

// dollar reads an expansion at s.i ($, then what follows it); quoted says
// it is within double quotes or a here-document, where $” and $"" are
// not quotes.
func (s *nestScan) dollar(quoted bool) error {
	switch c := s.at(1); {
	case c == '(' && s.at(2) == '(':
		return s.push(nestArith, 3, "$((")
	case c == '(':
		return s.push(nestCmdSubst, 2, "$(")
	case c == '{':
		switch s.at(2) {
		case ' ', '\t', '\n', '|':
			return s.push(nestCmdBraces, 2, "${")
		}
		return s.push(nestParam, 2, "${")
	case c == '[':
		return s.push(nestArithBrack, 2, "$[")
	case c == '\'' && !quoted:
		s.skipANSI()
	case c == '"' && !quoted:
		return s.push(nestDQ, 2, `$"`)
	default:
		s.i++
	}
	return nil
}

// quote reads a backslash, a quote or an expansion at s.i, which escape,
// open or nest the same way in every context but one: quoted says s.i is
// within double quotes or a here-document's body, where ' and " are plain
// bytes. It reports whether the byte was one of them.
func (s *nestScan) quote(quoted bool) (bool, error) {
	switch s.src[s.i] {
	case '\\':
		s.i += 2
	case '\'':
		if quoted {
			return false, nil
		}
		s.skipSingle(0)
	case '"':
		if quoted {
			return false, nil
		}
		return true, s.push(nestDQ, 1, `"`)
	case '$':
		return true, s.dollar(quoted)
	case '`':
		return true, s.backquote()
	default:
		return false, nil
	}
	return true, nil
}

// command reads the next token of a command, a compound command or a
// substitution.
func (s *nestScan) command() error {
	c := s.src[s.i]
	switch c {
	case ' ', '\t':
		s.i++
		if s.assign {
			s.assign, s.cmdPos = false, true
		}
	case '\n':
		s.i++
		s.endCommand()
		queue := slices.Clone(s.hdocs[s.bury:])
		s.hdocs = s.hdocs[:s.bury]
		return s.startHeredocs(queue)
	case '#':
		if s.i == 0 || isMeta(s.src[s.i-1]) {
			if j := strings.IndexByte(s.src[s.i:], '\n'); j >= 0 {
				s.i += j
			} else {
				s.i = len(s.src)
			}
			return nil
		}
		return s.word()
	case '\\', '\'', '"', '$', '`':
		// A quote or an expansion makes a word; an escaped newline and a
		// backquote leave the position as it was.
		if c != '`' && (c != '\\' || s.at(1) != '\n') {
			s.cmdPos = false
		}
		_, err := s.quote(false)
		return err
	case ';':
		n := 1
		if s.at(1) == ';' || s.at(1) == '&' {
			n++
			if s.at(2) == '&' {
				n++
			}
			if l := s.topLevel(); n > 1 && l != nil && l.kind == nestCase {
				l.pattern, s.bury = true, l.outerBury
			}
		}
		s.i += n
		s.endCommand()
	case '&', '|':
		if c == '&' && s.at(1) == '>' {
			s.i += 2 // &> and &>> redirect
			return nil
		}
		s.i++
		if s.at(0) == c || s.at(0) == '&' {
			s.i++
		}
		s.endCommand()
	case '(':
		return s.openParen()
	case ')':
		switch l := s.topLevel(); {
		case l != nil && l.kind == nestCase && l.pattern:
			l.pattern, s.bury = false, len(s.hdocs) // a case item buries
			s.i++
			s.cmdPos = true
		case l != nil && (l.kind == nestSubshell || l.kind == nestArray || l.kind == nestCmdSubst):
			s.pop(1)
		default:
			s.i++
		}
	case '<', '>':
		return s.redirect(c)
	default:
		return s.word()
	}
	return nil
}

// openParen reads a ( in a command.
func (s *nestScan) openParen() error {
	if l := s.topLevel(); l != nil && l.kind == nestCase && l.pattern {
		s.i++ // case x in (a) ...
		return nil
	}
	j := s.i + 1
	for j < len(s.src) && (s.src[j] == ' ' || s.src[j] == '\t') {
		j++
	}
	if j < len(s.src) && s.src[j] == ')' {
		// name(): the parser recurses into the function's body, which may
		// be another name().
		err := s.addPrefix("()")
		s.i = j + 1
		s.cmdPos = true
		return err
	}
	if s.at(1) == '(' {
		return s.push(nestArith, 2, "((")
	}
	if s.i > 0 && s.src[s.i-1] == '=' {
		return s.push(nestArray, 1, "=(")
	}
	return s.push(nestSubshell, 1, "(")
}

// redirect reads a redirection operator, a process substitution or the
// start of a here-document.
func (s *nestScan) redirect(c byte) error {
	if s.at(1) == '(' {
		return s.push(nestSubshell, 2, string(c)+"(")
	}
	if c == '>' || s.at(1) != '<' {
		s.i++
		if c := s.at(0); c == '&' || c == '|' || c == '>' {
			s.i++ // >& <& >| >> <>
		}
		return nil
	}
	if s.at(2) == '<' {
		s.i += 3 // a here-string
		return nil
	}
	s.i += 2
	dash := s.at(0) == '-'
	if dash {
		s.i++
	}
	for s.i < len(s.src) && (s.src[s.i] == ' ' || s.src[s.i] == '\t') {
		s.i++
	}
	var delim strings.Builder
	quoted := false
	for s.i < len(s.src) && !isMeta(s.src[s.i]) {
		switch c := s.src[s.i]; c {
		case '\'', '"':
			quoted = true
			j := strings.IndexByte(s.src[s.i+1:], c)
			if j < 0 {
				j = len(s.src) - s.i - 1
			}
			delim.WriteString(s.src[s.i+1 : s.i+1+j])
			s.i += j + 2
		case '\\':
			quoted = true
			if s.i+1 < len(s.src) {
				delim.WriteByte(s.src[s.i+1])
			}
			s.i += 2
		default:
			delim.WriteByte(c)
			s.i++
		}
	}
	if delim.Len() > 0 || quoted {
		s.hdocs = append(s.hdocs, heredoc{delim: delim.String(), dash: dash, quoted: quoted})
	}
	s.i = min(s.i, len(s.src))
	return nil
}

// startHeredocs starts the bodies of queue, the here-documents whose bodies
// start at this newline, in order: a quoted one's body is skipped, an
// unquoted one's is read for its substitutions.
func (s *nestScan) startHeredocs(queue []heredoc) error {
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		if !h.quoted {
			err := s.push(nestHeredoc, 0, "<<")
			l := s.topLevel()
			l.delim, l.dash, l.rest = h.delim, h.dash, queue
			return err
		}
		for s.i < len(s.src) && !s.endLine(h.delim, h.dash) {
		}
	}
	return nil
}

// endLine reads the line at s.i and reports whether it ends a
// here-document (delim alone on it).
func (s *nestScan) endLine(delim string, dash bool) bool {
	line, next := s.src[s.i:], len(s.src)
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line, next = line[:j], s.i+j+1
	}
	if dash {
		line = strings.TrimLeft(line, "\t")
	}
	s.i = next
	return line == delim
}

// heredocBody reads an unquoted here-document's body: its substitutions
// nest, and a line holding its delimiter ends it.
func (s *nestScan) heredocBody() error {
	if s.i == 0 || s.src[s.i-1] == '\n' {
		l := s.topLevel()
		start := s.i
		if s.endLine(l.delim, l.dash) {
			rest := l.rest
			s.pop(0)
			s.cmdPos = true
			return s.startHeredocs(rest)
		}
		s.i = start
	}
	if ok, err := s.quote(true); ok {
		return err
	}
	s.i++
	return nil
}

// dquoted reads within double quotes.
func (s *nestScan) dquoted() error {
	if s.src[s.i] == '"' {
		s.pop(1)
		return nil
	}
	if ok, err := s.quote(true); ok {
		return err
	}
	s.i++
	return nil
}

// param reads within ${...}.
func (s *nestScan) param() error {
	c := s.src[s.i]
	if l := s.topLevel(); l.stage < 2 {
		// ${#name[i]:offset...: an index right after the name and a
		// slice as its operator are arithmetic.
		switch {
		case l.stage == 0 && (c == '#' || c == '!') && s.src[s.i-1] == '{':
			s.i++
			return nil
		case l.stage == 0 && (isAlnum(c) || c == '_'):
			s.i++
			return nil
		case l.stage == 0 && c == '[':
			l.stage = 1
			return s.push(nestArithBrack, 1, "[")
		}
		l.stage = 2
		if n := s.at(1); c == ':' && n != '-' && n != '=' && n != '?' && n != '+' {
			return s.push(nestSlice, 1, ":")
		}
	}
	if c == '}' {
		s.pop(1)
		return nil
	}
	if ok, err := s.quote(false); ok {
		return err
	}
	s.i++
	return nil
}

// arith reads within arithmetic: $(( )), (( )), $[ ], an index [ ] and the
// parentheses in them.
func (s *nestScan) arith() error {
	c := s.src[s.i]
	if s.top() == nestLet && strings.IndexByte("\n;&|)<>", c) >= 0 {
		s.pop(0) // the command goes on, or ends, as a command
		return nil
	}
	switch c {
	case ' ', '\t', '\n':
		s.i++
	case '(':
		return s.push(nestArithParen, 1, "(")
	case ')':
		switch k := s.top(); {
		case k == nestArithParen:
			s.pop(1)
		case k == nestArith && s.at(1) == ')':
			s.pop(2)
		default:
			s.i++
		}
	case '[':
		return s.push(nestArithBrack, 1, "[")
	case ']':
		if s.top() == nestArithBrack {
			s.pop(1)
		} else {
			s.i++
		}
	case '}':
		if s.top() == nestSlice {
			s.pop(0)
			s.pop(1) // its ${
		} else {
			s.i++
		}
	case '\\', '\'', '"', '$', '`':
		if c == '\'' {
			s.operand = false
		}
		_, err := s.quote(false)
		return err
	default:
		if strings.IndexByte(arithOps, c) < 0 {
			s.i++
			s.operand = false
			return nil
		}
		return s.arithOps()
	}
	return nil
}

// arithOps are the bytes of arithmetic operators.
const arithOps = "+-*/%!~^&|<>=?:,;"

// arithOps reads a run of operator bytes and counts those the parser
// recurses on: a unary + - ! ~, an assignment, a ? and a **. A comma (or
// the ; of for ((;;))) ends what the ones before it nest.
func (s *nestScan) arithOps() error {
	j := s.i
	for j < len(s.src) && strings.IndexByte(arithOps, s.src[j]) >= 0 {
		j++
	}
	run := s.src[s.i:j]
	for k := 0; k < len(run); k++ {
		c := run[k]
		recurses := false
		switch c {
		case ',', ';':
			if l := s.topLevel(); l != nil {
				s.weight -= l.ops
				l.ops = 0
			}
			s.operand = true
			continue
		case '+', '-', '!', '~':
			recurses = s.operand
		case '=':
			prev, next := byte(0), byte(0)
			if k > 0 {
				prev = run[k-1]
			}
			if k+1 < len(run) {
				next = run[k+1]
			}
			recurses = next != '=' && prev != '=' && prev != '!' &&
				!((prev == '<' || prev == '>') && (k < 2 || run[k-2] != prev))
		case '?':
			recurses = true
		case '*':
			recurses = k+1 < len(run) && run[k+1] == '*'
		}
		s.operand = true
		if recurses {
			if err := s.op("an arithmetic operator"); err != nil {
				return err
			}
		}
	}
	s.i = j
	return nil
}

// test reads within [[ ]]: its parentheses nest, and the parser recurses
// on each && || and !.
func (s *nestScan) test() error {
	switch c := s.src[s.i]; c {
	case ' ', '\t', '\n':
		s.i++
	case '(':
		return s.push(nestTestParen, 1, "(")
	case ')':
		if s.top() == nestTestParen {
			s.pop(1)
		} else {
			s.i++
		}
	case '&', '|':
		if s.at(1) == c {
			s.i += 2
			return s.op("`" + string([]byte{c, c}) + "`")
		}
		s.i++
	case '\\', '\'', '"', '$', '`':
		_, err := s.quote(false)
		return err
	default:
		j := s.i
		for j < len(s.src) && !isMeta(s.src[j]) && strings.IndexByte("'\"`$\\", s.src[j]) < 0 {
			j++
		}
		w := s.src[s.i:j]
		if j == s.i {
			j++
		}
		end := j >= len(s.src) || isMeta(s.src[j])
		s.i = j
		switch {
		case end && w == "]]" && s.top() == nestTest:
			s.pop(0)
		case end && w == "!":
			return s.op("`!`")
		}
	}
	return nil
}

// word reads a word in a command: a keyword in command position opens or
// closes a compound command.
func (s *nestScan) word() error {
	if s.top() == nestArray && s.src[s.i] == '[' && (s.i == 0 || isMeta(s.src[s.i-1])) {
		return s.push(nestArithBrack, 1, "[") // a=([i]=x)
	}
	j := s.i
	for j < len(s.src) && !isMeta(s.src[j]) && strings.IndexByte("'\"`$\\", s.src[j]) < 0 {
		j++
	}
	w := s.src[s.i:j]
	whole := j >= len(s.src) || isMeta(s.src[j])
	cmdPos := s.cmdPos
	s.cmdPos = false
	if cmdPos || s.decl {
		// name[i]=x, name=x, name+=x: an assignment, whose index is
		// arithmetic.
		n := 0
		for n < len(w) && (w[n] == '_' || isAlnum(w[n]) && (n > 0 || w[n] > '9')) {
			n++
		}
		switch {
		case n > 0 && n < len(w) && w[n] == '[':
			s.assign = true
			s.i += n
			return s.push(nestArithBrack, 1, "[")
		case n > 0 && n < len(w) && (w[n] == '=' || w[n] == '+' && n+1 < len(w) && w[n+1] == '='):
			s.assign = cmdPos
		}
	}
	l := s.topLevel()
	switch {
	case !whole:
		s.i = j
		s.funcName = false
		return nil
	case l != nil && l.kind == nestCase && l.pattern:
		if w == "esac" {
			s.pop(len(w))
			return nil
		}
	case s.funcName:
		s.funcName = false
		s.cmdPos = true
	case cmdPos:
		return s.keyword(w)
	}
	s.i = j
	return nil
}

// keyword reads w, a whole word in command position.
func (s *nestScan) keyword(w string) error {
	k := s.top()
	switch w {
	case "if":
		return s.push(nestIf, len(w), w)
	case "while", "until":
		return s.push(nestLoop, len(w), w)
	case "for", "select":
		err := s.push(nestLoop, len(w), w)
		s.cmdPos = false
		return err
	case "case":
		return s.push(nestCase, len(w), w)
	case "let":
		return s.push(nestLet, len(w), w)
	case "declare", "local", "export", "readonly", "typeset", "nameref":
		s.decl = true
	case "{":
		return s.push(nestBlock, len(w), w)
	case "[[":
		return s.push(nestTest, len(w), w)
	case "}":
		if (k == nestBlock || k == nestCmdBraces) && len(s.stack) > 0 {
			s.pop(len(w))
			return nil
		}
	case "fi":
		if k == nestIf {
			s.pop(len(w))
			return nil
		}
	case "done":
		if k == nestLoop {
			s.pop(len(w))
			return nil
		}
	case "esac":
		if k == nestCase {
			s.pop(len(w))
			return nil
		}
	case "then", "do", "else", "elif":
		s.cmdPos = true
	case "!", "time", "coproc":
		s.cmdPos = true
		err := s.addPrefix(w)
		s.i += len(w)
		return err
	case "function":
		s.funcName = true
		err := s.addPrefix(w)
		s.i += len(w)
		return err
	}
	s.i += len(w)
	return nil
}
