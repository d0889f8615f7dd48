package sdk

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
)

// Settings returns the settings the host passed to this plugin at launch
// (the profile's plugins.<name> section), read from YAGENT_PLUGIN_SETTINGS.
// It returns an empty map, never nil, when there are none; settings that do
// not decode as a JSON object of strings are ignored (Serve logs why).
func Settings() map[string]string {
	m, err := parseSettings(os.Getenv(SettingsEnv))
	if err != nil {
		return map[string]string{}
	}
	return m
}

func parseSettings(raw string) (map[string]string, error) {
	m := map[string]string{}
	if raw == "" {
		return m, nil
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return map[string]string{}, fmt.Errorf("%s is not a JSON object of strings: %w", SettingsEnv, err)
	}
	if m == nil { // the literal null
		m = map[string]string{}
	}
	return m, nil
}

// ProgramSetting is what a plugin setting that names a program (the search
// plugin's rg_path and ctags_path) resolved to.
type ProgramSetting struct {
	// Path is the program to run, "" when there is none.
	Path string
	// Off says the setting turned the program off.
	Off bool
	// Set says Path is the program the setting named.
	Set bool
	// Bad is the setting when it named no executable: Path, if any, was
	// then found on PATH.
	Bad string
}

// LookProgram resolves a setting that names a program: none when it is
// "off", "none" or "false"; the program it names when that is an
// executable; else name found on PATH. lookPath is exec.LookPath when nil.
func LookProgram(setting, name string, lookPath func(string) (string, error)) ProgramSetting {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	var ps ProgramSetting
	switch setting {
	case "off", "none", "false":
		ps.Off = true
		return ps
	case "":
	default:
		if p, err := lookPath(setting); err == nil {
			ps.Path, ps.Set = p, true
			return ps
		}
		ps.Bad = setting
	}
	if p, err := lookPath(name); err == nil {
		ps.Path = p
	}
	return ps
}

// Note says, for a model, why the program is not the one the setting key
// named; "" when it is, or when the setting named none.
func (ps ProgramSetting) Note(key string) string {
	if ps.Bad == "" {
		return ""
	}
	if ps.Path == "" {
		return fmt.Sprintf("%s %q is not an executable, and none was found on PATH", key, ps.Bad)
	}
	return fmt.Sprintf("%s %q is not an executable; using %s", key, ps.Bad, ps.Path)
}
