package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/sdk"
)

func writeSkill(t *testing.T, dir, folder, content string) string {
	t.Helper()
	p := filepath.Join(dir, folder)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, skillFileName), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestUseSkill(t *testing.T) {
	t.Parallel()
	first, second := t.TempDir(), t.TempDir()
	pdf := writeSkill(t, first, "pdf-tools", "---\nname: pdf\ndescription: Fill and merge PDF forms.\n---\n# PDF\n\nRun scripts/fill.py.\n")
	writeSkill(t, first, "plain", "No front matter, just steps.\n")
	crlf := writeSkill(t, first, "win", "---\r\nname: Windows\r\ndescription: CRLF skill\r\n---\r\nUse PowerShell.\r\n")
	writeSkill(t, second, "pdf", "---\nname: pdf\ndescription: shadowed\n---\nshadowed body\n")
	writeSkill(t, second, "broken", "---\nname: [unclosed\n---\nbody\n")
	if err := os.MkdirAll(filepath.Join(first, "not-a-skill"), 0o755); err != nil {
		t.Fatal(err)
	}
	single := writeSkill(t, t.TempDir(), "solo", "---\nname: solo\n---\nI am the folder itself.\n")
	dirs := []string{first, second, single, filepath.Join(first, "missing")}

	tests := []struct {
		name     string
		input    string
		wantPath string
		wantBody string
	}{
		{"by front matter name", `{"name":"pdf"}`, pdf, "# PDF\n\nRun scripts/fill.py."},
		{"folder name without front matter", `{"name":"plain"}`, filepath.Join(first, "plain"), "No front matter, just steps."},
		{"case-insensitive, CRLF front matter", `{"name":"windows"}`, crlf, "Use PowerShell."},
		{"a skill dir that is itself a skill", `{"name":"solo"}`, single, "I am the folder itself."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := mustCall(t, useSkillTool(dirs), "s", tt.input)
			sk, ok := res.Data.(skill)
			if !ok || sk.Path != tt.wantPath {
				t.Fatalf("use_skill(%s) data = %+v, want path %s", tt.input, res.Data, tt.wantPath)
			}
			if !strings.HasSuffix(res.Text, "\n\n"+tt.wantBody) || !strings.Contains(res.Text, "Folder: "+tt.wantPath) {
				t.Fatalf("use_skill(%s) text = %q, want the folder and body %q", tt.input, res.Text, tt.wantBody)
			}
		})
	}

	t.Run("unknown lists the available skills", func(t *testing.T) {
		t.Parallel()
		_, err := call(t, useSkillTool(dirs), "s", `{"name":"excel"}`)
		te := toolErr(t, err, sdk.CodeNotFound)
		for _, want := range []string{`no skill named "excel"`, "- pdf: Fill and merge PDF forms.", "- plain", "- Windows: CRLF skill", "- solo", "- broken: (the front matter"} {
			if !strings.Contains(te.Message, want) {
				t.Errorf("message %q lacks %q", te.Message, want)
			}
		}
		if strings.Contains(te.Message, "shadowed") || strings.Contains(te.Message, "not-a-skill") {
			t.Errorf("message %q lists a shadowed skill or a folder without SKILL.md", te.Message)
		}
	})
	t.Run("none installed", func(t *testing.T) {
		t.Parallel()
		empty := t.TempDir()
		_, err := call(t, useSkillTool([]string{empty}), "s", `{"name":"pdf"}`)
		if te := toolErr(t, err, sdk.CodeNotFound); !strings.Contains(te.Message, "no skills are installed (searched "+empty+")") {
			t.Fatalf("message %q", te.Message)
		}
		_, err = call(t, useSkillTool(nil), "s", `{"name":"pdf"}`)
		if te := toolErr(t, err, sdk.CodeNotFound); !strings.Contains(te.Message, "no skill folders are configured") {
			t.Fatalf("message %q", te.Message)
		}
	})
}
