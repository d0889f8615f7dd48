package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/yagent/yagent/host/app"
	"github.com/yagent/yagent/host/audit"
	"github.com/yagent/yagent/host/config"
)

// auditFlags are yagent audit's own flags.
type auditFlags struct {
	filter       audit.Filter
	since, until string
	output       string
	follow       bool
	path         string
}

func newAuditCmd(g *globals) *cobra.Command {
	var af auditFlags
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show the audit log: each call, its decision and who allowed it (filters, -o json, --follow)",
		Long: `Show the audit log, oldest line first: the decision on each call (allowed inside
the workspace, by a rule or a pass; asked, and who answered; denied, by which rule),
each call's result code, duration and bytes, and the asks a running call made.

The filters combine; --decision and --code select decision and call lines, --by any
line with an answer. --since and --until take an RFC 3339 time or a duration back
from now (30m, 1h, 2d). --follow prints the lines that match, then each new one as
it is written, until interrupted. -o json prints the lines as stored.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runAudit(cmd, g, &af) },
	}
	f := cmd.Flags()
	f.StringVar(&af.filter.Session, "session", "", "only this session (its id, or the start of it as the text output shows)")
	f.StringVar(&af.filter.Tool, "tool", "", "only this tool")
	f.StringVar(&af.filter.Kind, "kind", "", "only lines of this kind: decision, call, approval or network (a connection through the session's proxy: a command's, the browser's, web_fetch's)")
	f.StringVar(&af.filter.Decision, "decision", "", "only decisions (and network lines) that came out so: allow, ask or deny")
	f.StringVar(&af.filter.By, "by", "", "only asks answered by: user, session_pass, project_pass, yolo_pass or nobody; network lines of the browser and web_fetch also navigation (an approved URL's origin) or page (the page rule)")
	f.StringVar(&af.filter.Code, "code", "", "only calls that returned this result code (denied, timeout, ...)")
	f.BoolVar(&af.filter.Failed, "failed", false, "only calls that returned an error code")
	f.StringVar(&af.since, "since", "", "only lines from this time on (RFC 3339, or a duration back from now: 1h)")
	f.StringVar(&af.until, "until", "", "only lines before this time (RFC 3339, or a duration back from now)")
	f.StringVarP(&af.output, "output", "o", "text", "text or json (the lines as stored)")
	f.BoolVarP(&af.follow, "follow", "f", false, "go on printing lines as they are written, across rotations, until interrupted")
	f.StringVar(&af.path, "path", "", "the audit folder to read (default: the profile's audit.path, else ~/.yagent/audit)")
	cmd.MarkFlagsMutuallyExclusive("code", "failed")
	return cmd
}

func runAudit(cmd *cobra.Command, g *globals, af *auditFlags) error {
	now := time.Now()
	var err error
	if af.since != "" {
		if af.filter.Since, err = audit.ParseTime(af.since, now); err != nil {
			return fmt.Errorf("--since: %w", err)
		}
	}
	if af.until != "" {
		if af.filter.Until, err = audit.ParseTime(af.until, now); err != nil {
			return fmt.Errorf("--until: %w", err)
		}
	}
	if err := af.filter.Check(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	// Buffered, as a long log is many small lines; following, each line
	// goes out as it comes.
	out := bufio.NewWriter(cmd.OutOrStdout())
	defer out.Flush()
	var print func(*audit.Line) error
	p := &textPrinter{w: out, args: map[string]string{}}
	switch af.output {
	case "text":
		print = p.print
	case "json":
		print = func(l *audit.Line) error {
			out.Write(l.Raw)
			return out.WriteByte('\n')
		}
	default:
		return fmt.Errorf("unknown output %q: use text or json", af.output)
	}
	if af.follow {
		each := print
		print = func(l *audit.Line) error {
			if err := each(l); err != nil {
				return err
			}
			return out.Flush()
		}
	}
	dir, from := auditDir(g, af.path, cmd.ErrOrStderr())
	stderr := cmd.ErrOrStderr()
	r := &audit.Reader{
		Dir:    dir,
		Filter: af.filter,
		Warn:   func(err error) { fmt.Fprintln(stderr, "yagent: warning:", err) },
		Saw:    p.remember,
	}
	if af.follow {
		err = r.Follow(cmd.Context(), print)
	} else {
		err = r.Read(cmd.Context(), print)
	}
	if errors.Is(err, audit.ErrNoFolder) {
		return fmt.Errorf("no audit log at %s (%s): the host writes one there once a call is made with auditing on "+
			"(audit: on, the default, or required, in ~/.yagent/config.yaml or the managed config; audit.path moves the folder); "+
			"--path DIR reads another folder", dir, from)
	}
	if err != nil {
		return err
	}
	return out.Flush()
}

// auditDir is the folder to read and where that choice came from: --path,
// else the folder the host writes to (the profile's audit.path, else
// ~/.yagent/audit), resolved as the host resolves it.
func auditDir(g *globals, flag string, stderr io.Writer) (dir, from string) {
	if flag != "" {
		return flag, "given by --path"
	}
	dir, named, err := app.AuditDir(g.appOptions(stderr))
	switch {
	case err != nil:
		fmt.Fprintln(stderr, "yagent: warning: the profile does not load, so its audit.path is not known:", err)
	case named:
		return dir, "the profile's audit.path"
	case dir != "":
		return dir, "the default folder"
	}
	home := config.UserDir("")
	if home == "" {
		return filepath.Join("~", ".yagent", "audit"), "the default folder; this user has no home folder"
	}
	return filepath.Join(home, "audit"), "the default folder"
}

// textPrinter prints one aligned line per record.
type textPrinter struct {
	w io.Writer
	// args holds each decided call's main argument until its call line
	// comes, which carries none of its own.
	args map[string]string
}

// maxRemembered bounds args: calls decided and never finished (a host
// killed mid-call) would otherwise pile up over a long log.
const maxRemembered = 4096

func (p *textPrinter) remember(l *audit.Line) {
	if l.Kind != "decision" {
		return
	}
	if len(p.args) >= maxRemembered {
		clear(p.args)
	}
	if a := mainArg(l); a != "" {
		p.args[l.Call] = a
	}
}

func (p *textPrinter) print(l *audit.Line) error {
	arg := mainArg(l)
	if l.Kind == "call" {
		arg = p.args[l.Call]
		delete(p.args, l.Call)
	}
	sess := l.Session
	if utf8.RuneCountInString(sess) > 8 {
		sess = string([]rune(sess)[:8])
	}
	if sess == "" {
		sess = "-"
	}
	arg = clip(clean(arg), 80)
	if (l.Kind == "decision" || l.Kind == "network") && l.Rule != "" {
		arg += "  (rule: " + clip(clean(l.Rule), 80) + ")"
	}
	row := fmt.Sprintf("%s  %s  %s  %s  %s  %s",
		l.Time.Local().Format(time.DateTime),
		pad(clean(l.Kind), 8), pad(clean(l.Tool), 22), pad(clean(outcome(l)), 24), pad(clean(sess), 8), arg)
	_, err := io.WriteString(p.w, strings.TrimRight(row, " ")+"\n")
	return err
}

// outcome is what came of the line: allow/workspace, ask/rule yes by user,
// denied 0.1ms, exec no by nobody.
func outcome(l *audit.Line) string {
	var s string
	switch l.Kind {
	case "decision":
		s = l.Decision + "/" + l.Basis
	case "call":
		s = l.Code
		if s == "" {
			s = "ok"
		}
		return s + " " + duration(l.DurationMS)
	case "approval":
		s = l.Ask
	case "network":
		s = l.Decision
		if l.Answer == nil {
			// An ask has its answer; an allow and a deny say what came
			// of the connection.
			return s + " " + strconv.FormatInt(l.Up, 10) + "/" + strconv.FormatInt(l.Down, 10) + "B"
		}
	default:
		return l.Kind
	}
	if l.Answer != nil {
		yes := "no"
		if l.Answer.Approved {
			yes = "yes"
		}
		s += " " + yes + " by " + l.Answer.By
	}
	return s
}

func duration(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(ms/1000, 'f', 1, 64) + "s"
	}
	return strconv.FormatFloat(ms, 'f', 1, 64) + "ms"
}

// mainArg is the argument that says what the call touched: its command,
// URL or path, or an approval's command line.
func mainArg(l *audit.Line) string {
	for _, k := range []string{"command", "url", "path"} {
		var s string
		if raw, ok := l.Args[k]; ok && json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	switch {
	case l.Command != "":
		return l.Command
	case len(l.Argv) > 0:
		return strings.Join(l.Argv, " ")
	case l.Program != "":
		return l.Program
	case len(l.Paths) > 0:
		return strings.Join(l.Paths, " ")
	case l.Host != "":
		s := strings.TrimSpace(l.Method + " " + net.JoinHostPort(l.Host, strconv.Itoa(l.Port)))
		if l.Addr != "" && !strings.HasPrefix(l.Addr, l.Host+":") && !strings.HasPrefix(l.Addr, "["+l.Host+"]:") {
			s += " at " + l.Addr
		}
		return s
	}
	return ""
}

// clean keeps a line one line and the terminal's state the log's reader's:
// a command or path may hold newlines and escape sequences.
func clean(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == utf8.RuneError }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsControl(r) || r == utf8.RuneError:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func pad(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
