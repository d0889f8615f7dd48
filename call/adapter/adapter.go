package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/yagent/yagent/call/bus"
	"github.com/yagent/yagent/call/session"
	"github.com/yagent/yagent/call/toolspec"
	"github.com/yagent/yagent/sdk"
)

// DefaultMaxTextBytes caps the model text of a result when Options sets none.
const DefaultMaxTextBytes = 256 << 10

// Options configures an Adapter.
type Options struct {
	// Workspace is the absolute workspace root passed to the guard and the executor.
	Workspace string
	// Logger receives the structured warnings (unusable input); nil = slog.Default().
	Logger *slog.Logger
	// MaxTextBytes caps a result's model text; 0 = DefaultMaxTextBytes.
	MaxTextBytes int
	// Bus receives tool started, progress and finished events; nil = none.
	Bus *bus.Dispatcher
	// Trusted is false for tools of unpinned external plugins.
	Trusted bool
	// Observer sees every call start, get decided and finish (the audit
	// trail, telemetry); nil = none.
	Observer Observer
	// Sandbox sets each call's sdk.CallInfo.Sandbox from the guard's
	// decision; approved says it was an ask the user, a pass or -y
	// approved. nil = the attached guard's, when it is a SandboxPolicy.
	Sandbox func(spec sdk.Spec, sess *session.Session, d Decision, approved bool) *sdk.Sandbox
	// Temp returns the session's own temp folder, made on its first call
	// (nil: none); the guard judges the call's paths by it and the call
	// carries it (sdk.CallInfo.Temp). nil = no session has one.
	Temp func(sess *session.Session) *sdk.TempFolder
}

// Adapter is one tool of the surface; Call is its pipeline. An Adapter is
// safe for concurrent calls once its guard is attached.
type Adapter struct {
	spec      sdk.Spec
	family    string
	tier      toolspec.Tier
	exec      Executor
	opts      Options
	logger    *slog.Logger
	schema    *schema
	schemaErr error

	guard    Guard
	approver Approver
}

// New returns the adapter of spec, served by exec. The input schema is
// compiled here, once; a schema that does not compile is reported by
// SchemaError and fails every call.
func New(spec sdk.Spec, family string, tier toolspec.Tier, exec Executor, opts Options) *Adapter {
	if opts.MaxTextBytes <= 0 {
		opts.MaxTextBytes = DefaultMaxTextBytes
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	a := &Adapter{spec: spec, family: family, tier: tier, exec: exec, opts: opts, logger: logger}
	a.schema, a.schemaErr = compileSchema(spec.InputSchema)
	return a
}

// Name returns the tool's name.
func (a *Adapter) Name() string { return a.spec.Name }

// Spec returns the tool's spec, as bound by the registry for static tools.
func (a *Adapter) Spec() sdk.Spec { return a.spec }

// Family returns the family that serves the tool.
func (a *Adapter) Family() string { return a.family }

// Tier returns the tool's tier before any budget demotion.
func (a *Adapter) Tier() toolspec.Tier { return a.tier }

// Brief returns the spec's one-line brief, "" when it has none.
func (a *Adapter) Brief() string { return a.spec.Brief }

// Trusted reports whether the guard may believe the spec's Effect and roles.
func (a *Adapter) Trusted() bool { return a.opts.Trusted }

// SchemaError returns why the input schema did not compile, nil when it did.
func (a *Adapter) SchemaError() error { return a.schemaErr }

// AttachGuard sets the guard and the approver of the adapter. The surface
// calls it once for every adapter, after building them all, before any call.
// An adapter without a guard runs every valid call, and one without an
// approver answers every ask with needs_auth.
func (a *Adapter) AttachGuard(g Guard, ap Approver) {
	a.guard = g
	a.approver = ap
}

// Call runs the pipeline on raw input: parse (unusable input falls back to
// {"input": raw}) → repair → validate → guard → authorize → execute → wrap.
// It never returns nil; failures are envelopes with a Code.
func (a *Adapter) Call(ctx context.Context, sess *session.Session, raw json.RawMessage) *Result {
	if sess == nil {
		sess = session.New("")
	}
	callID := callIDFrom(ctx)
	var rec *CallRecord
	if ob := a.opts.Observer; ob != nil {
		rec = &CallRecord{ID: callID, SessionID: sess.ID(), Client: sess.Client(), Tool: a.spec.Name, Family: a.family,
			Effect: string(a.spec.Effect), Trusted: a.opts.Trusted, Roles: a.spec.Roles, Started: time.Now()}
		ctx = ob.Start(ctx, rec)
	}
	a.opts.Bus.Publish(bus.Event{Type: bus.ToolStarted, SessionID: sess.ID(), CallID: callID, Tool: a.spec.Name})
	res := a.run(ctx, sess, callID, raw, rec)
	if text, cut := capText(res.Text, a.opts.MaxTextBytes); cut {
		res.Text, res.Truncated = text, true
	}
	if rec != nil {
		a.opts.Observer.Finish(ctx, rec, res)
	}
	a.opts.Bus.Publish(bus.Event{Type: bus.ToolFinished, SessionID: sess.ID(), CallID: callID, Tool: a.spec.Name, Payload: res})
	return res
}

func (a *Adapter) run(ctx context.Context, sess *session.Session, callID string, raw json.RawMessage, rec *CallRecord) (res *Result) {
	name := a.spec.Name
	if a.schemaErr != nil {
		return errorResult(sdk.CodeToolFailed, fmt.Sprintf("%s cannot be called: its %v. This is a fault of the tool, not of the call.", name, a.schemaErr))
	}
	if ctx.Err() != nil {
		return a.ctxResult(ctx.Err())
	}

	// 1. Parse; unusable input falls back to {"input": raw}.
	args, reason := parseArgs(raw)
	var repairs []Repair
	var warnings []string
	changed := false
	if args == nil {
		args = map[string]any{"input": fallbackInput(raw)}
		a.logger.Warn("unusable tool input",
			"tool", name, "reason", reason, "raw_len", len(raw), "raw_prefix", prefix(raw, 64),
			"session", sess.ID(), "call", callID)
		repairs = append(repairs, Repair{Kind: RepairUnusableInput, Field: "input", Detail: reason})
		warnings = append(warnings, fmt.Sprintf(`the arguments were not a JSON object (%s); they were passed on as {"input": ...}`, reason))
		changed = true
	}
	if _, ok := args["description"]; ok && !a.schema.declares("description") {
		delete(args, "description")
		repairs = append(repairs, Repair{Kind: RepairDescriptionDropped, Field: "description", Detail: "undeclared description field removed"})
		changed = true
	}

	// 2. Repair, 3. validate; when the repaired input is still wrong, give
	// up on the repairs and speak of what the model sent.
	fixed, fixes := repairArgs(a.schema.doc, a.spec.Roles, args)
	problems := a.schema.validate(fixed)
	if problems != nil && len(fixes) > 0 {
		if orig := a.schema.validate(args); orig == nil {
			fixed, fixes, problems = args, nil, nil
		} else {
			problems = orig
		}
	}
	if problems != nil {
		r := a.invalidInput(problems, reason)
		r.Repairs, r.Warnings = repairs, warnings
		return r
	}
	args = fixed
	if len(fixes) > 0 {
		repairs = append(repairs, fixes...)
		changed = true
	}
	if rec != nil {
		rec.Args = args
	}
	input := json.RawMessage(trimJSONSpace(raw))
	if changed {
		var err error
		if input, err = encodeArgs(args); err != nil {
			return errorResult(sdk.CodeToolFailed, fmt.Sprintf("%s: the repaired input does not encode: %v", name, err))
		}
	}
	defer func() {
		res.Repairs = append(repairs, res.Repairs...)
		res.Warnings = append(warnings, res.Warnings...)
	}()

	spaced := spacedPaths(a.spec.Roles, args)
	warnings = append(warnings, spaced...)
	if len(spaced) > 0 {
		// A failed call says it in its text too: the spaces are the
		// likeliest reason a file "does not exist".
		defer func() {
			if res.Code != "" {
				res.Text += "\nNote: " + strings.Join(spaced, "; ") + "."
			}
		}()
	}

	// 4. Workspace boundary and authorization.
	var approved []string
	var d Decision
	asked := false // an ask was approved for this call
	temp := a.temp(sess)
	if a.guard == nil {
		d = Decision{Action: Allow, Basis: BasisNoGuard}
	} else {
		d = a.guard.Check(ctx, GuardRequest{Spec: a.spec, Args: args, Workspace: a.opts.Workspace, Session: sess, Trusted: a.opts.Trusted, Temp: temp})
		switch d.Action {
		case Allow:
			// Outside paths the guard allows (read whitelist, a pass) go
			// with the call, so the plugin may open them.
			approved = d.Paths
		case Deny:
			a.decided(ctx, rec, d, nil, false)
			return errorResult(sdk.CodeDenied, RefusedText(name, d))
		default:
			if a.approver == nil {
				a.decided(ctx, rec, d, &Approval{Unanswered: true, By: ByNobody}, false)
				return a.needsAuth(d, "")
			}
			ap := a.approver.Authorize(ctx, sess, a.spec, d)
			if !ap.Allowed {
				a.decided(ctx, rec, d, &ap, false)
				switch {
				case ctx.Err() != nil:
					return a.ctxResult(ctx.Err())
				case ap.Unanswered || sess.Answerer() == nil:
					return a.needsAuth(d, ap.Reason)
				}
				text := fmt.Sprintf("The user declined %s (%s).", name, d.Reason)
				if why := strings.TrimSpace(ap.Reason); why != "" {
					text += " The user said: " + why
				}
				return errorResult(sdk.CodeDenied, text+" Do not retry the same call; follow what the user said or choose another way.")
			}
			if r := a.decided(ctx, rec, d, &ap, true); r != nil {
				return r
			}
			approved = ap.Paths
			asked = true
		}
	}
	if d.Action == Allow {
		if r := a.decided(ctx, rec, d, nil, true); r != nil {
			return r
		}
	}

	// One resolution: the plugin receives the values the guard judged,
	// never the model's text to interpret again. Not a repair: the model's
	// call was right, the host only spelled it out.
	if d.Args != nil {
		var err error
		if input, err = encodeArgs(d.Args); err != nil {
			return errorResult(sdk.CodeToolFailed, fmt.Sprintf("%s: the resolved input does not encode: %v", name, err))
		}
	}

	// 5. Execute.
	info := sdk.CallInfo{ID: callID, Tool: name, SessionID: sess.ID(), Workspace: a.opts.Workspace, ApprovedPaths: approved,
		Sandbox: a.sandbox(sess, d, asked), Temp: temp}
	if dl, ok := ctx.Deadline(); ok {
		info.Deadline = dl
	}
	// The one path of a call's progress: the bus, whose taps (the fronts)
	// see each event before the call returns.
	progress := func(p sdk.Progress) {
		a.opts.Bus.Publish(bus.Event{Type: bus.ToolProgress, SessionID: sess.ID(), CallID: callID, Tool: name, Payload: p})
	}
	out, err := a.execute(session.NewContext(ctx, sess), info, input, progress)

	// 6. Wrap.
	if err != nil {
		return a.errorEnvelope(ctx, err)
	}
	return a.envelope(out)
}

// decided tells the observer how the call was decided. A result ends an
// allowed call: the observer could not record it (audit: required).
func (a *Adapter) decided(ctx context.Context, rec *CallRecord, d Decision, ap *Approval, allowed bool) *Result {
	if rec == nil {
		return nil
	}
	rec.Decided, rec.Action, rec.Rule, rec.Reason, rec.Paths, rec.Approval, rec.Allowed = true, d.Action, d.Rule, d.Reason, d.Paths, ap, allowed
	rec.Basis = d.Basis
	if rec.Basis == "" {
		rec.Basis = BasisGuard
	}
	if d.Args != nil {
		rec.Args = d.Args
	}
	err := a.opts.Observer.Decide(ctx, rec)
	if err == nil || !allowed {
		return nil
	}
	return errorResult(sdk.CodeAuditUnavailable, fmt.Sprintf("%s did not run: this host records every call before it runs (audit: required) and could not record this one (%v). Tell the user the audit log needs attention; until it is fixed every call fails the same way.", a.spec.Name, err))
}

// temp is the session's own temp folder, made on its first call; the
// session keeps it for what else the host judges for it (input typed into
// a terminal).
func (a *Adapter) temp(sess *session.Session) *sdk.TempFolder {
	if a.opts.Temp == nil {
		return nil
	}
	t := a.opts.Temp(sess)
	sess.SetTemp(t)
	return t
}

// sandbox is the call's containment, built now: the session's grants and
// this call's approval as they stand when it starts.
func (a *Adapter) sandbox(sess *session.Session, d Decision, approved bool) *sdk.Sandbox {
	if a.opts.Sandbox != nil {
		return a.opts.Sandbox(a.spec, sess, d, approved)
	}
	if sp, ok := a.guard.(SandboxPolicy); ok {
		return sp.Sandbox(a.spec, sess, d, approved)
	}
	return nil
}

func (a *Adapter) execute(ctx context.Context, info sdk.CallInfo, input json.RawMessage, progress func(sdk.Progress)) (out *sdk.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			a.logger.Error("tool panicked", "tool", a.spec.Name, "panic", p, "stack", string(debug.Stack()))
			out, err = nil, fmt.Errorf("%s panicked: %v", a.spec.Name, p)
		}
	}()
	return a.exec.Execute(ctx, info, input, progress)
}

func (a *Adapter) envelope(out *sdk.Result) *Result {
	if out == nil {
		out = &sdk.Result{}
	}
	res := &Result{Text: out.Text, Images: out.Images}
	if out.Data != nil {
		b, err := json.Marshal(out.Data)
		if err != nil {
			return errorResult(sdk.CodeResultUnencoding, fmt.Sprintf("%s returned a result that cannot be serialized (%T: %v); its output is lost. This is a fault of the tool.", a.spec.Name, out.Data, err))
		}
		if string(b) != "null" {
			res.Data = b
		}
	}
	if res.Text == "" && len(res.Data) > 0 {
		res.Text = string(res.Data)
	}
	if res.Text == "" && len(res.Images) == 0 {
		res.Text = "(no output)"
	}
	for _, n := range out.Notes {
		res.Repairs = append(res.Repairs, Repair{Kind: n.Kind, Detail: n.Detail})
	}
	return res
}

func (a *Adapter) errorEnvelope(ctx context.Context, err error) *Result {
	if te, ok := sdk.AsToolError(err); ok {
		code := te.Code
		if code == "" {
			code = sdk.CodeToolFailed
		}
		res := errorResult(code, te.Message)
		if te.Data != nil {
			if b, mErr := json.Marshal(te.Data); mErr == nil {
				res.Data = b
			} else {
				res.Warnings = append(res.Warnings, fmt.Sprintf("the error's data (%T) cannot be serialized: %v", te.Data, mErr))
			}
		}
		return res
	}
	if ctx.Err() != nil {
		return a.ctxResult(ctx.Err())
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return a.ctxResult(err)
	}
	return errorResult(sdk.CodeToolFailed, fmt.Sprintf("%s failed: %v", a.spec.Name, err))
}

// ctxResult is the envelope of a call ended by err, a cancel or a deadline.
func (a *Adapter) ctxResult(err error) *Result {
	if errors.Is(err, context.DeadlineExceeded) {
		return errorResult(sdk.CodeTimeout, fmt.Sprintf("%s did not finish before its deadline and was stopped. Try a smaller request, or run long work in the background.", a.spec.Name))
	}
	return errorResult(sdk.CodeCancelled, fmt.Sprintf("%s was cancelled before it finished.", a.spec.Name))
}

// needsAuth fails a call closed: it needs the user's authorization and
// nobody answered (why, when known, says what happened).
func (a *Adapter) needsAuth(d Decision, why string) *Result {
	return errorResult(sdk.CodeNeedsAuth, NeedsAuthText(a.spec.Name, d, why))
}

// NeedsAuthText is what the model reads when a call of tool that asks (d)
// fails closed with needs_auth: nobody could be asked, or nobody answered
// (why, when known, says what happened). sdk/plugintest says the same.
func NeedsAuthText(tool string, d Decision, why string) string {
	nobody := "nobody can be asked in this session"
	if why = strings.TrimSpace(why); why != "" {
		nobody = "nobody answered: " + why
	}
	text := fmt.Sprintf("%s needs the user's authorization (%s), and %s, so the call did not run. To allow such calls, the user can start yagent with -y", tool, d.Reason, nobody)
	if d.Hint != "" {
		text += ", or " + d.Hint
	}
	return text + ". Until then, stay inside the workspace or choose another way."
}

// RefusedText is what the model reads when the guard refuses a call of
// tool (d: an exec deny rule, a command past the guard's bounds, or a
// write no approval opens). It says d.Reason, not d.Hint. sdk/plugintest
// says the same.
func RefusedText(tool string, d Decision) string {
	return fmt.Sprintf("%s was refused: %s. This rule stands; do not retry the same call.", tool, d.Reason)
}

// EncodeArgs encodes arguments as the plugin receives them: no HTML
// escaping, no trailing newline. The host does not call it: sdk/plugintest
// does, to hand a plugin author's tool the arguments the guard resolved.
func EncodeArgs(args map[string]any) (json.RawMessage, error) { return encodeArgs(args) }

// ParseArgs decodes raw input as the pipeline's first step does, numbers
// kept as json.Number; nil and a reason when it is no JSON object. The host
// does not call it: sdk/plugintest does, to judge a call as the pipeline
// would.
func ParseArgs(raw []byte) (map[string]any, string) { return parseArgs(raw) }

func (a *Adapter) invalidInput(problems []fieldProblem, unusable string) *Result {
	name := a.spec.Name
	var b strings.Builder
	if unusable != "" {
		fmt.Fprintf(&b, "The arguments for %s were not a usable JSON object (%s), so they were passed as {\"input\": ...}, which %s does not accept.\n", name, unusable, name)
	}
	fmt.Fprintf(&b, "Invalid input for %s:\n", name)
	lines := make([]string, len(problems))
	for i, p := range problems {
		lines[i] = p.String()
		fmt.Fprintf(&b, "- %s\n", p)
	}
	valid := a.schema.validFields()
	if len(valid) > 0 {
		fmt.Fprintf(&b, "Valid fields: %s.\n", strings.Join(valid, ", "))
	}
	fmt.Fprintf(&b, "Send a JSON object with these fields and call %s again.", name)
	data, _ := json.Marshal(struct {
		Problems    []fieldProblem `json:"problems"`
		ValidFields []string       `json:"valid_fields"`
	}{problems, propertyNames(a.schema.doc)})
	return &Result{Code: sdk.CodeInvalidInput, Text: b.String(), Data: data}
}

// parseArgs decodes raw as a JSON object; for anything else it returns nil
// and why the input is unusable.
func parseArgs(raw []byte) (map[string]any, string) {
	trimmed := trimJSONSpace(raw)
	if len(trimmed) == 0 {
		return nil, "empty input"
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, "invalid JSON: " + err.Error()
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, "invalid JSON: data after the top-level value"
	}
	switch o := v.(type) {
	case map[string]any:
		return o, ""
	case nil:
		return nil, "literal null"
	default:
		return nil, "a JSON " + goType(o) + ", not an object"
	}
}

// trimJSONSpace trims what JSON counts as white space (space, tab, CR, LF),
// and nothing else: "{}\f" is not a JSON object.
func trimJSONSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

// fallbackInput is the value of "input" for unusable raw input: the raw text
// itself, or the string a JSON string literal holds.
func fallbackInput(raw []byte) string {
	var s string
	if bytes.HasPrefix(trimJSONSpace(raw), []byte(`"`)) && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func prefix(raw []byte, n int) string {
	if len(raw) <= n {
		return string(raw)
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(raw[cut]) {
		cut--
	}
	return string(raw[:cut]) + "…"
}

// capText keeps the head and the tail of s, about max bytes in all (exactly
// within max from a few hundred bytes up), with a line in between saying
// how much was cut.
func capText(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	const reserve = 160
	keep := max - reserve
	if keep < 2 {
		keep = 2
	}
	head := keep / 2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	tail := len(s) - (keep - keep/2)
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	cut := tail - head
	marker := fmt.Sprintf("\n[... %d bytes cut from the middle: the result exceeded %d bytes; ask for less (a range, a filter) to see it ...]\n", cut, max)
	return s[:head] + marker + s[tail:], true
}

// spacedPaths warns of path arguments that begin or end with white space.
// Such a name is legal and is judged and opened as written; the warning
// lets the model see the spaces it may not have meant.
func spacedPaths(roles map[string]sdk.Role, args map[string]any) []string {
	var out []string
	for _, p := range slices.Sorted(maps.Keys(roles)) {
		if r := roles[p]; r != sdk.RolePathRead && r != sdk.RolePathWrite {
			continue
		}
		var vals []string
		switch v := args[p].(type) {
		case string:
			vals = []string{v}
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					vals = append(vals, s)
				}
			}
		}
		for _, v := range vals {
			if t := strings.TrimSpace(v); t != v && t != "" {
				out = append(out, fmt.Sprintf("%s %q begins or ends with white space and was taken as written; if you meant %q, call again without it", p, v, t))
			}
		}
	}
	return out
}
