package sdk

import (
	"encoding/json"
	"fmt"
	"os"
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
