package remote

import (
	"encoding/json"

	"github.com/yagent/yagent/sdk"
	pluginpb "github.com/yagent/yagent/sdk/proto"
)

// The conversions between the sdk's plain Go types and the wire messages,
// in the host's direction: what the host sends a plugin and what it reads
// of the plugin's messages. The plugin's direction is the sdk's
// grpc_convert.go.

func specFromWire(w *pluginpb.ToolSpec) sdk.Spec {
	var roles map[string]sdk.Role
	if len(w.GetRoles()) > 0 {
		roles = make(map[string]sdk.Role, len(w.GetRoles()))
		for k, v := range w.GetRoles() {
			roles[k] = sdk.Role(v)
		}
	}
	var schema json.RawMessage
	if len(w.GetInputSchema()) > 0 {
		schema = json.RawMessage(w.GetInputSchema())
	}
	return sdk.Spec{
		Name:        w.GetName(),
		Description: w.GetDescription(),
		Brief:       w.GetBrief(),
		InputSchema: schema,
		Effect:      sdk.Effect(w.GetEffect()),
		Serial:      w.GetSerial(),
		ReadOnly:    w.GetReadOnly(),
		AlwaysAsk:   w.GetAlwaysAsk(),
		Roles:       roles,
	}
}

func callToWire(info sdk.CallInfo, input json.RawMessage, brokerID uint32) *pluginpb.CallRequest {
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

// tempToWire keeps nil nil: no temp folder is not an empty one.
func tempToWire(t *sdk.TempFolder) *pluginpb.TempFolder {
	if t == nil {
		return nil
	}
	return &pluginpb.TempFolder{Dir: t.Dir, Over: t.Over}
}

// sandboxToWire keeps nil nil: no sandbox set is not an empty one.
func sandboxToWire(s *sdk.Sandbox) *pluginpb.Sandbox {
	if s == nil {
		return nil
	}
	mode := s.Network
	if mode == "" {
		mode = sdk.NetworkOn
	}
	// The boolean is what a plugin of the first protocol reads: only on
	// keeps the network there, so proxy fails closed (loopback only).
	w := &pluginpb.Sandbox{Mode: s.Mode, Network: mode == sdk.NetworkOn, NetworkMode: mode, Read: s.Read, Write: s.Write, Granted: s.Granted,
		Pids: int64(s.Pids), MemoryMb: int64(s.MemoryMB), TmpSizeMb: int64(s.TmpSizeMB), UnixSockets: s.UnixSockets}
	if e := s.Egress; e != nil {
		w.Egress = &pluginpb.Egress{Netns: e.NetNS, Proxy: e.Proxy}
	}
	for _, p := range s.Programs {
		wp := &pluginpb.ExecProgram{Name: p.Name, Interactive: p.Interactive}
		for _, f := range p.Files {
			wp.Files = append(wp.Files, &pluginpb.ProgramFile{Path: f.Path, Size: f.Size, Sha256: f.SHA256})
		}
		w.Programs = append(w.Programs, wp)
	}
	return w
}

func approvalFromWire(w *pluginpb.ApprovalRequest) sdk.ApprovalRequest {
	return sdk.ApprovalRequest{
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

func progressFromWire(p *pluginpb.Progress) sdk.Progress {
	return sdk.Progress{Message: p.GetMessage(), Progress: p.GetProgress(), Total: p.GetTotal()}
}

func resultFromWire(w *pluginpb.CallResult) *sdk.Result {
	r := &sdk.Result{Text: w.GetText()}
	if len(w.GetData()) > 0 {
		r.Data = json.RawMessage(w.GetData())
	}
	for _, img := range w.GetImages() {
		r.Images = append(r.Images, sdk.Image{MIMEType: img.GetMimeType(), Data: img.GetData(), Path: img.GetPath()})
	}
	for _, n := range w.GetNotes() {
		r.Notes = append(r.Notes, sdk.Note{Kind: n.GetKind(), Detail: n.GetDetail()})
	}
	return r
}

func toolErrorFromWire(w *pluginpb.ToolError) *sdk.ToolError {
	te := &sdk.ToolError{Code: w.GetCode(), Message: w.GetMessage()}
	if len(w.GetData()) > 0 {
		te.Data = json.RawMessage(w.GetData())
	}
	return te
}
