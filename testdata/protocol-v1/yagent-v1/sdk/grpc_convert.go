package sdk

import (
	"encoding/json"
	"time"

	pluginpb "github.com/yagent/yagent/sdk/proto"
)

// The conversions between the sdk's plain Go types and the wire messages,
// in the plugin's direction: what a plugin sends and what it reads of the
// host's messages. The host's direction is internal/remote's convert.go.
// They are the only place in the sdk both kinds of types meet.

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

func tempFromWire(w *pluginpb.TempFolder) *TempFolder {
	if w == nil {
		return nil
	}
	return &TempFolder{Dir: w.GetDir(), Over: w.GetOver()}
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

func progressToWire(p Progress) *pluginpb.Progress {
	return &pluginpb.Progress{Message: p.Message, Progress: p.Progress, Total: p.Total}
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
