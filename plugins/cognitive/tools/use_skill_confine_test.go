package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

// TestUseSkill_Confined: skill folders and SKILL.md files are read only
// where they resolve inside their skill dir, and a skill dir in the
// workspace that leads outside it is not read at all.
func TestUseSkill_Confined(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	ws, outside, user := filepath.Join(root, "ws"), filepath.Join(root, "outside"), filepath.Join(root, "user-skills")
	secret := "SECRET-skill-body"
	writeSkill(t, outside, "evil", "---\nname: evil\n---\n"+secret+"\n")
	writeSkill(t, user, "good", "---\nname: good\n---\nfine body\n")
	// A SKILL.md symlink out of the user's skill dir, a skill folder
	// symlink out of it, and a workspace skill dir symlinked out.
	if err := os.MkdirAll(filepath.Join(user, "filelink"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustLink(t, filepath.Join(outside, "evil", skillFileName), filepath.Join(user, "filelink", skillFileName))
	mustLink(t, filepath.Join(outside, "evil"), filepath.Join(user, "folderlink"))
	if err := os.MkdirAll(filepath.Join(ws, ".yagent"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustLink(t, outside, filepath.Join(ws, ".yagent", "skills"))
	inWs := writeSkill(t, filepath.Join(ws, "skills-in"), "local", "---\nname: local\n---\nlocal body\n")

	dirs := []string{filepath.Join(ws, ".yagent", "skills"), user, filepath.Dir(inWs)}
	tool := useSkillTool(dirs)
	ctx := sdk.WithCall(context.Background(), sdk.CallInfo{ID: "c", Tool: useSkillName, SessionID: "s", Workspace: ws})
	for _, name := range []string{"evil", "filelink", "folderlink"} {
		res, err := tool.Call(ctx, json.RawMessage(`{"name":"`+name+`"}`))
		if err == nil {
			t.Errorf("use_skill(%s) = %q, want not_found", name, res.Text)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("use_skill(%s) shows the outside skill: %v", name, err)
		}
		if !strings.Contains(err.Error(), "skipped") {
			t.Errorf("use_skill(%s): %v, want it to name what was skipped", name, err)
		}
	}
	for name, body := range map[string]string{"good": "fine body", "local": "local body"} {
		res, err := tool.Call(ctx, json.RawMessage(`{"name":"`+name+`"}`))
		if err != nil || !strings.Contains(res.Text, body) {
			t.Errorf("use_skill(%s) = %v, %v; want its body", name, res, err)
		}
	}
}

func mustLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
