package config_test

import (
	"strings"
	"testing"

	"github.com/yagent/yagent/host/config"
)

// TestLoad_AuditLayers: the user and the managed layer set the audit keys
// (the managed one winning); a project's audit keys change nothing and are
// named in a warning, so a workspace cannot turn its own auditing off.
func TestLoad_AuditLayers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		mode  string
		path  string // suffix the resolved path must have; "" = unset
		keep  int
		warn  string // a warning must name this; "" = none
	}{
		{"default on", nil, "on", "", 0, ""},
		{"user shorthand required", map[string]string{userConfig: "audit: required\n"}, "required", "", 0, ""},
		{"user off", map[string]string{userConfig: "audit: {mode: off}\n"}, "off", "", 0, ""},
		{"user boolean off", map[string]string{userConfig: "audit: false\n"}, "off", "", 0, ""},
		{"user path and keep", map[string]string{userConfig: "audit: {path: ~/logs/audit, keep: 3, max_size_mb: 1}\n"}, "on", "/logs/audit", 3, ""},
		{"project cannot turn it off", map[string]string{projectConfig: "audit: {mode: off}\n"}, "on", "", 0, "audit ignored"},
		{"project cannot lower required", map[string]string{userConfig: "audit: required\n", projectConfig: "audit: {mode: on, path: /tmp/elsewhere}\n"}, "required", "", 0, "audit ignored"},
		{"project shorthand off", map[string]string{projectConfig: "audit: off\n"}, "on", "", 0, "audit ignored"},
		{"managed required holds against the user", map[string]string{managedConfig: "audit: required\n", userConfig: "audit: off\n"}, "required", "", 0, ""},
		{"managed path wins", map[string]string{managedConfig: "audit: {path: /var/log/yagent}\n", userConfig: "audit: {path: /tmp/mine}\n"}, "on", "/var/log/yagent", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ld, err := config.Load(newFixture(t, tt.files).opts(nil, nil))
			if err != nil {
				t.Fatal(err)
			}
			p := ld.Profile
			if p.AuditMode() != tt.mode {
				t.Errorf("audit mode %q, want %q", p.AuditMode(), tt.mode)
			}
			if tt.path == "" && p.Audit.Path != "" || !strings.HasSuffix(p.Audit.Path, tt.path) {
				t.Errorf("audit path %q, want one ending %q", p.Audit.Path, tt.path)
			}
			if p.Audit.Keep != tt.keep {
				t.Errorf("audit keep %d, want %d", p.Audit.Keep, tt.keep)
			}
			joined := strings.Join(ld.Warnings, "\n")
			if tt.warn == "" && strings.Contains(joined, "audit") {
				t.Errorf("warnings %q, want none about audit", joined)
			}
			if tt.warn != "" && !strings.Contains(joined, tt.warn) {
				t.Errorf("warnings %q, want one naming %q", joined, tt.warn)
			}
		})
	}
}

// TestLoad_AuditInvalid: a bad mode is refused with the key named.
func TestLoad_AuditInvalid(t *testing.T) {
	t.Parallel()
	_, err := config.Load(newFixture(t, map[string]string{userConfig: "audit: {mode: sometimes}\n"}).opts(nil, nil))
	if err == nil || !strings.Contains(err.Error(), "audit.mode") {
		t.Fatalf("err %v, want one naming audit.mode", err)
	}
}
