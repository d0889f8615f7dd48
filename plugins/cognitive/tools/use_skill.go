package tools

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/yagent/yagent/policy"
	"github.com/yagent/yagent/sdk"
)

const useSkillName = "use_skill"

//go:embed use_skill.md
var useSkillDescription string

// skillFileName is the file that makes a folder a skill.
const skillFileName = "SKILL.md"

// maxSkillFileBytes bounds how much of a SKILL.md is read.
var maxSkillFileBytes int64 = 1 << 20

type useSkillInput struct {
	Name string `json:"name"`
}

// skill is one skill found in a skill folder.
type skill struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Path is the skill's folder.
	Path string `json:"path"`
	body string
}

// useSkillTool returns skills found under dirs, searched in order; the
// first skill of a name wins.
func useSkillTool(dirs []string) sdk.Tool {
	return sdk.NewTool(sdk.Spec{
		Name:        useSkillName,
		Description: useSkillDescription,
		Brief:       "Load a skill by name.",
		Effect:      sdk.EffectRead,
		ReadOnly:    true,
	}, func(ctx context.Context, in useSkillInput) (*sdk.Result, error) {
		name := strings.TrimSpace(in.Name)
		skills, skipped := findSkills(sdk.CallFrom(ctx).Workspace, dirs)
		var notes []sdk.Note
		for _, s := range skipped {
			notes = append(notes, sdk.Note{Kind: "skipped", Detail: s})
		}
		if sk, ok := pickSkill(skills, name); ok {
			return &sdk.Result{
				Text:  fmt.Sprintf("Skill %s\nFolder: %s (paths in the skill are relative to it)\n\n%s", sk.Name, sk.Path, sk.body),
				Data:  sk,
				Notes: notes,
			}, nil
		}
		return nil, unknownSkill(name, skills, dirs, skipped)
	})
}

// pickSkill matches name exactly, else case-insensitively when that is
// unambiguous.
func pickSkill(skills []skill, name string) (skill, bool) {
	var fold []skill
	for _, sk := range skills {
		if sk.Name == name {
			return sk, true
		}
		if strings.EqualFold(sk.Name, name) {
			fold = append(fold, sk)
		}
	}
	if len(fold) == 1 {
		return fold[0], true
	}
	return skill{}, false
}

func unknownSkill(name string, skills []skill, dirs, skipped []string) error {
	if len(skills) == 0 {
		where := "no skill folders are configured (profile key skill_dirs)"
		if len(dirs) > 0 {
			where = "searched " + strings.Join(dirs, ", ")
		}
		if len(skipped) > 0 {
			where += "; skipped " + strings.Join(skipped, "; ")
		}
		return &sdk.ToolError{Code: sdk.CodeNotFound,
			Message: fmt.Sprintf("no skill named %q: no skills are installed (%s); go on without one", name, where),
			Data:    map[string]any{"available": []skill{}}}
	}
	var lines []string
	for _, sk := range skills {
		line := "- " + sk.Name
		if sk.Description != "" {
			line += ": " + sk.Description
		}
		lines = append(lines, line)
	}
	msg := fmt.Sprintf("no skill named %q; call use_skill with one of the available skills:\n%s", name, strings.Join(lines, "\n"))
	if len(skipped) > 0 {
		msg += "\n(skipped, not read: " + strings.Join(skipped, "; ") + ")"
	}
	return &sdk.ToolError{Code: sdk.CodeNotFound,
		Message: msg,
		Data:    map[string]any{"available": skills}}
}

// findSkills lists the skills under dirs, sorted by name: each dir may be a
// skill itself or hold skill folders. Unreadable folders and files are
// skipped; the first skill of a name wins.
//
// Skill folders and files are resolved and confined: a skill folder or
// SKILL.md that a symlink leads out of its skill dir is not read, nor is a
// skill dir named inside the workspace ws that leads outside it (the
// repository's content is not the user's skills). skipped names them.
func findSkills(ws string, dirs []string) (out []skill, skipped []string) {
	seen := map[string]bool{}
	wsReal := realPath(ws)
	add := func(root, folder string) {
		file, ok := confined(root, filepath.Join(folder, skillFileName))
		if !ok {
			skipped = append(skipped, fmt.Sprintf("%s (it leads outside %s)", filepath.Join(folder, skillFileName), root))
			return
		}
		sk, err := readSkill(folder, file)
		if err != nil || seen[sk.Name] {
			return
		}
		seen[sk.Name] = true
		out = append(out, sk)
	}
	for _, dir := range dirs {
		root := realPath(dir)
		if root == "" {
			continue
		}
		if ws != "" && wsReal != "" && (policy.Within(filepath.Clean(ws), filepath.Clean(dir), true) || policy.Within(wsReal, filepath.Clean(dir), true)) && !policy.Within(wsReal, root, true) {
			skipped = append(skipped, fmt.Sprintf("%s (it leads outside the workspace, to %s)", dir, root))
			continue
		}
		if isFile(filepath.Join(dir, skillFileName)) {
			add(root, dir)
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			folder := filepath.Join(dir, e.Name())
			if isFile(filepath.Join(folder, skillFileName)) {
				add(root, folder)
			}
		}
	}
	slices.SortFunc(out, func(a, b skill) int { return strings.Compare(a.Name, b.Name) })
	return out, skipped
}

// confined resolves p's symlinks and reports whether it stays within root
// (already resolved); it returns the resolved path to open.
func confined(root, p string) (string, bool) {
	r := realPath(p)
	return r, r != "" && root != "" && policy.Within(root, r, true)
}

// realPath is p absolute with its symlinks resolved, "" when it does not
// exist.
func realPath(p string) string {
	abs, err := filepath.Abs(p)
	if p == "" || err != nil {
		return ""
	}
	r, _ := policy.Existing(abs)
	return r
}

// readSkill reads file, folder's SKILL.md resolved: YAML front matter (name, description)
// between --- lines, then the body. Without a name, the folder names it;
// front matter that does not parse is said in the description.
func readSkill(folder, file string) (skill, error) {
	f, err := os.Open(file)
	if err != nil {
		return skill{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSkillFileBytes))
	if err != nil {
		return skill{}, err
	}
	sk := skill{Name: filepath.Base(folder), Path: folder, body: strings.TrimSpace(string(b))}
	front, body, ok := cutFrontMatter(b)
	if !ok {
		return sk, nil
	}
	var meta struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
	}
	sk.body = strings.TrimSpace(string(body))
	if err := yaml.Unmarshal(front, &meta); err != nil {
		// Listed under its folder's name, so its author sees why.
		sk.Description = fmt.Sprintf("(the front matter of its %s does not parse: %v)", skillFileName, err)
		return sk, nil
	}
	if n := strings.TrimSpace(meta.Name); n != "" {
		sk.Name = n
	}
	sk.Description = strings.TrimSpace(meta.Description)
	return sk, nil
}

// cutFrontMatter splits "---\n<yaml>\n---\n<body>"; ok is false when b has
// no front matter.
func cutFrontMatter(b []byte) (front, body []byte, ok bool) {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	rest, ok := bytes.CutPrefix(b, []byte("---\n"))
	if !ok {
		return nil, b, false
	}
	if fm, after, found := bytes.Cut(rest, []byte("\n---\n")); found {
		return fm, after, true
	}
	if fm, found := bytes.CutSuffix(bytes.TrimRight(rest, "\n"), []byte("\n---")); found {
		return fm, nil, true
	}
	if fm, after, found := bytes.Cut(rest, []byte("---\n")); found && len(fm) == 0 {
		return fm, after, true // empty front matter
	}
	return nil, b, false
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
