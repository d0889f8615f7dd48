package config

import "fmt"

// Audit modes (audit.mode).
const (
	AuditOn       = "on"
	AuditOff      = "off"
	AuditRequired = "required"
)

const keyAudit = "audit"

// AuditRules say where and how the audit trail is kept. Only the user and
// managed layers set them: a project's audit keys are ignored, so a
// workspace cannot turn its own auditing off.
type AuditRules struct {
	// Mode is on (the default), off or required: under required a call
	// whose decision cannot be recorded fails with audit_unavailable.
	Mode string `koanf:"mode" json:"mode,omitempty" yaml:"mode,omitempty"`
	// Path is the audit folder; "" = ~/.yagent/audit.
	Path string `koanf:"path" json:"path,omitempty" yaml:"path,omitempty"`
	// MaxSizeMB is the live file's size past which it is rotated; 0 = 64.
	MaxSizeMB int `koanf:"max_size_mb" json:"max_size_mb,omitempty" yaml:"max_size_mb,omitempty"`
	// Keep is how many rotated files are kept; 0 = 10.
	Keep int `koanf:"keep" json:"keep,omitempty" yaml:"keep,omitempty"`
}

// AuditMode returns the profile's audit mode, on when unset.
func (p *Profile) AuditMode() string {
	if p == nil || p.Audit.Mode == "" {
		return AuditOn
	}
	return p.Audit.Mode
}

// expandAudit turns the shorthand `audit: required` into `audit: {mode:
// required}`, and YAML booleans into on and off.
func expandAudit(data map[string]any) {
	onOff := func(v any) any {
		if b, ok := v.(bool); ok {
			if b {
				return AuditOn
			}
			return AuditOff
		}
		return v
	}
	switch v := data[keyAudit].(type) {
	case string, bool:
		data[keyAudit] = map[string]any{"mode": onOff(v)}
	case map[string]any:
		if x, ok := v["mode"]; ok {
			v["mode"] = onOff(x)
		}
	}
}

// validateAudit checks one layer's audit values.
func validateAudit(p *Profile, bad func(key, format string, args ...any)) {
	switch p.Audit.Mode {
	case "", AuditOn, AuditOff, AuditRequired:
	default:
		bad("audit.mode", "invalid value %q (want on, off or required)", p.Audit.Mode)
	}
	if p.Audit.MaxSizeMB < 0 {
		bad("audit.max_size_mb", "invalid value %d (want a positive number of MiB)", p.Audit.MaxSizeMB)
	}
	if p.Audit.Keep < 0 {
		bad("audit.keep", "invalid value %d (want 0 or more rotated files)", p.Audit.Keep)
	}
}

// ceilAudit applies the managed layer's audit keys to p: the admin's
// settings win over the user's.
func ceilAudit(p *Profile, q AuditRules, record func(sub string)) {
	if q.Mode != "" {
		p.Audit.Mode = q.Mode
		record("mode")
	}
	if q.Path != "" {
		p.Audit.Path = q.Path
		record("path")
	}
	if q.MaxSizeMB != 0 {
		p.Audit.MaxSizeMB = q.MaxSizeMB
		record("max_size_mb")
	}
	if q.Keep != 0 {
		p.Audit.Keep = q.Keep
		record("keep")
	}
}

// projectAuditWarning names a project's audit keys, which are ignored.
func projectAuditWarning(label string) string {
	return fmt.Sprintf("%s: audit ignored: only the user's config or the managed config sets the audit keys; a project cannot change its own auditing", label)
}
