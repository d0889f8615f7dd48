package sdk

import (
	"encoding/json"
	"time"

	pluginpb "github.com/yagent/yagent/sdk/proto"
)

// The conversions between the sdk's plain Go types and the wire messages.
// They are the only place both kinds of types meet.

func specToWire(s Spec) *pluginpb.ToolSpec {
	var roles map[string]string
	if len(s.Roles) > 0 {
		roles = make(map[string]string, len(s.Roles))
		for k, v := range s.Roles {
			roles[k] = string(v)
		}
	}
	return &pluginpb.ToolSpec{
		Name:        s.Name,
		Description: s.Description,
		Brief:       s.Brief,
		InputSchema: []byte(s.InputSchema),
		Effect:      string(s.Effect),
		Serial:      s.Serial,
		ReadOnly:    s.ReadOnly,
		AlwaysAsk:   s.AlwaysAsk,
		Roles:       roles,
	}
}

func specFromWire(w *pluginpb.ToolSpec) Spec {
	var roles map[string]Role
	if len(w.GetRoles()) > 0 {
		roles = make(map[string]Role, len(w.GetRoles()))
		for k, v := range w.GetRoles() {
			roles[k] = Role(v)
		}
	}
	var schema json.RawMessage
	if len(w.GetInputSchema()) > 0 {
		schema = json.RawMessage(w.GetInputSchema())
	}
	return Spec{
		Name:        w.GetName(),
		Description: w.GetDescription(),
		Brief:       w.GetBrief(),
		InputSchema: schema,
		Effect:      Effect(w.GetEffect()),
		Serial:      w.GetSerial(),
		ReadOnly:    w.GetReadOnly(),
		AlwaysAsk:   w.GetAlwaysAsk(),
		Roles:       roles,
	}
}

func callToWire(info CallInfo, input json.RawMessage, brokerID uint32) *pluginpb.CallRequest {
	var deadline int64
	if !info.Deadline.IsZero() {
		deadline = info.Deadline.UnixNano()
	}
	return &pluginpb.CallRequest{
		CallId:           info.ID,
		Tool:             info.Tool,
		SessionId:        info.SessionID,
		WorkspaceRoot:    info.Workspace,
		ApprovedPaths:    info.ApprovedPaths,
		DeadlineUnixNano: deadline,
		Input:            []byte(input),
		HostBrokerId:     brokerID,
		Sandbox:          sandboxToWire(info.Sandbox),
		Temp:             tempToWire(info.Temp),
	}
}

func callFromWire(req *pluginpb.CallRequest) CallInfo {
	var deadline time.Time
	if n := req.GetDeadlineUnixNano(); n != 0 {
		deadline = time.Unix(0, n)
	}
	return CallInfo{
		ID:            req.GetCallId(),
		Tool:          req.GetTool(),
		SessionID:     req.GetSessionId(),
		Workspace:     req.GetWorkspaceRoot(),
		ApprovedPaths: req.GetApprovedPaths(),
		Deadline:      deadline,
		Sandbox:       sandboxFromWire(req.GetSandbox()),
		Temp:          tempFromWire(req.GetTemp()),
	}
}

// tempToWire keeps nil nil: no temp folder is not an empty one.
func tempToWire(t *TempFolder) *pluginpb.TempFolder {
	if t == nil {
		return nil
	}
	return &pluginpb.TempFolder{Dir: t.Dir, Over: t.Over}
}

func tempFromWire(w *pluginpb.TempFolder) *TempFolder {
	if w == nil {
		return nil
	}
	return &TempFolder{Dir: w.GetDir(), Over: w.GetOver()}
}

// sandboxToWire keeps nil nil: no sandbox set is not an empty one.
func sandboxToWire(s *Sandbox) *pluginpb.Sandbox {
	if s == nil {
		return nil
	}
	w := &pluginpb.Sandbox{Mode: s.Mode, Network: s.Network, Read: s.Read, Write: s.Write, Granted: s.Granted,
		Pids: int64(s.Pids), MemoryMb: int64(s.MemoryMB), TmpSizeMb: int64(s.TmpSizeMB), UnixSockets: s.UnixSockets}
	for _, p := range s.Programs {
		wp := &pluginpb.ExecProgram{Name: p.Name, Interactive: p.Interactive}
		for _, f := range p.Files {
			wp.Files = append(wp.Files, &pluginpb.ProgramFile{Path: f.Path, Size: f.Size, Sha256: f.SHA256})
		}
		w.Programs = append(w.Programs, wp)
	}
	return w
}

func sandboxFromWire(w *pluginpb.Sandbox) *Sandbox {
	if w == nil {
		return nil
	}
	s := &Sandbox{Mode: w.GetMode(), Network: w.GetNetwork(), Read: w.GetRead(), Write: w.GetWrite(), Granted: w.GetGranted(),
		Pids: int(w.GetPids()), MemoryMB: int(w.GetMemoryMb()), TmpSizeMB: int(w.GetTmpSizeMb()), UnixSockets: w.GetUnixSockets()}
	for _, wp := range w.GetPrograms() {
		p := ExecProgram{Name: wp.GetName(), Interactive: wp.GetInteractive()}
		for _, f := range wp.GetFiles() {
			p.Files = append(p.Files, ProgramFile{Path: f.GetPath(), Size: f.GetSize(), SHA256: f.GetSha256()})
		}
		s.Programs = append(s.Programs, p)
	}
	return s
}

// approvalToWire is the request a plugin sends for the call info.
func approvalToWire(info CallInfo, req ApprovalRequest) *pluginpb.ApprovalRequest {
	return &pluginpb.ApprovalRequest{
		CallId:       info.ID,
		SessionId:    info.SessionID,
		Tool:         info.Tool,
		Reason:       req.Reason,
		Paths:        req.Paths,
		Command:      req.Command,
		Kind:         req.Kind,
		TaskId:       req.TaskID,
		Program:      req.Program,
		Shell:        req.Shell,
		Input:        req.Input,
		Dir:          req.Dir,
		Unseen:       req.Unseen,
		Ahead:        req.Ahead,
		Argv:         req.Argv,
		Interpreters: req.Interpreters,
		Terminal:     req.Terminal,
	}
}

func approvalFromWire(w *pluginpb.ApprovalRequest) ApprovalRequest {
	return ApprovalRequest{
		Reason:       w.GetReason(),
		Paths:        w.GetPaths(),
		Command:      w.GetCommand(),
		Kind:         w.GetKind(),
		TaskID:       w.GetTaskId(),
		Program:      w.GetProgram(),
		Shell:        w.GetShell(),
		Input:        w.GetInput(),
		Dir:          w.GetDir(),
		Unseen:       w.GetUnseen(),
		Ahead:        w.GetAhead(),
		Argv:         w.GetArgv(),
		Interpreters: w.GetInterpreters(),
		Terminal:     w.GetTerminal(),
	}
}

func progressToWire(p Progress) *pluginpb.Progress {
	return &pluginpb.Progress{Message: p.Message, Progress: p.Progress, Total: p.Total}
}

func progressFromWire(p *pluginpb.Progress) Progress {
	return Progress{Message: p.GetMessage(), Progress: p.GetProgress(), Total: p.GetTotal()}
}

// resultToWire encodes r; Data that cannot be serialized is an error (the
// caller turns it into result_not_serializable), never an empty result.
func resultToWire(r *Result) (*pluginpb.CallResult, error) {
	if r == nil {
		return &pluginpb.CallResult{}, nil
	}
	data, err := encodeData(r.Data)
	if err != nil {
		return nil, err
	}
	out := &pluginpb.CallResult{Text: r.Text, Data: data}
	for _, img := range r.Images {
		out.Images = append(out.Images, &pluginpb.Image{MimeType: img.MIMEType, Data: img.Data, Path: img.Path})
	}
	for _, n := range r.Notes {
		out.Notes = append(out.Notes, &pluginpb.Note{Kind: n.Kind, Detail: n.Detail})
	}
	return out, nil
}

func resultFromWire(w *pluginpb.CallResult) *Result {
	r := &Result{Text: w.GetText()}
	if len(w.GetData()) > 0 {
		r.Data = json.RawMessage(w.GetData())
	}
	for _, img := range w.GetImages() {
		r.Images = append(r.Images, Image{MIMEType: img.GetMimeType(), Data: img.GetData(), Path: img.GetPath()})
	}
	for _, n := range w.GetNotes() {
		r.Notes = append(r.Notes, Note{Kind: n.GetKind(), Detail: n.GetDetail()})
	}
	return r
}

// encodeData marshals structured data; nil stays empty on the wire.
func encodeData(v any) ([]byte, error) {
	switch d := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if d == nil {
			return nil, nil
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return nil, nil
	}
	return b, nil
}

func toolErrorToWire(te *ToolError) *pluginpb.ToolError {
	code := te.Code
	if code == "" {
		code = CodeToolFailed
	}
	w := &pluginpb.ToolError{Code: code, Message: te.Message}
	if data, err := encodeData(te.Data); err == nil {
		w.Data = data
	} else {
		w.Message += " (its detail could not be serialized: " + err.Error() + ")"
	}
	return w
}

func toolErrorFromWire(w *pluginpb.ToolError) *ToolError {
	te := &ToolError{Code: w.GetCode(), Message: w.GetMessage()}
	if len(w.GetData()) > 0 {
		te.Data = json.RawMessage(w.GetData())
	}
	return te
}
