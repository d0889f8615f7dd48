package session

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/yagent/yagent/plugins/browser/chrome"
)

// Plugin settings read by OptionsFrom (profile: plugins.browser.<key>).
const (
	// SettingStateDir is the folder of per-session state.
	SettingStateDir = "state_dir"
	// SettingChromium names the browser binary; see chrome.SettingChromium.
	SettingChromium = chrome.SettingChromium
	// SettingDialogs is "accept" (the default) or "dismiss": what the
	// plugin answers to confirm() and prompt() dialogs.
	SettingDialogs = "dialogs"
	// SettingActionTimeoutMS bounds one navigation or action, in
	// milliseconds, when the host's call has no earlier deadline.
	SettingActionTimeoutMS = "action_timeout_ms"
	// SettingSnapshotBudget is how many bytes of snapshot text one answer
	// shows at most (DefaultSnapshotBudget when unset).
	SettingSnapshotBudget = "snapshot_budget_bytes"
	// SettingViewport is the pages' viewport, WIDTHxHEIGHT in CSS pixels
	// (1280x720 when unset).
	SettingViewport = "viewport"
)

// Options configure a Manager. The zero value works: no state folder (tabs
// are not kept across restarts), the browser found on PATH, defaults for
// every bound.
type Options struct {
	// StateDir is the folder of per-session state; "" keeps nothing.
	StateDir string
	// Chromium is the browser binary (a path or a name on PATH); "" looks
	// for chrome.Candidates on PATH.
	Chromium string
	// ProfileParent holds the browsers' fresh profile folders; "" is the
	// system's temporary folder.
	ProfileParent string
	// DismissDialogs answers confirm() and prompt() with Cancel instead of
	// OK. alert() and beforeunload are always accepted.
	DismissDialogs bool
	// ActionTimeout bounds one navigation or action when the call has no
	// earlier deadline; 0 means 30s.
	ActionTimeout time.Duration
	// StartTimeout bounds the start of a browser; 0 means 30s.
	StartTimeout time.Duration
	// SettleTimeout bounds the wait for a navigation that an action (a
	// click, Enter) started; 0 means 10s.
	SettleTimeout time.Duration
	// Width and Height are the pages' viewport (and the window's size);
	// 0 means 1280×720.
	Width, Height int
	// SnapshotBudget is how many bytes of snapshot text one answer shows
	// at most; 0 means DefaultSnapshotBudget.
	SnapshotBudget int
	// Logger receives the plugin's log; nil means hclog.L().
	Logger hclog.Logger
}

// OptionsFrom reads the plugin's settings (sdk.Settings()). The state
// folder falls back to $YAGENT_STATE_DIR, then ~/.yagent/state.
func OptionsFrom(settings map[string]string) Options {
	o := Options{
		StateDir:       strings.TrimSpace(settings[SettingStateDir]),
		Chromium:       strings.TrimSpace(settings[SettingChromium]),
		DismissDialogs: strings.EqualFold(strings.TrimSpace(settings[SettingDialogs]), "dismiss"),
	}
	if ms, err := strconv.Atoi(strings.TrimSpace(settings[SettingActionTimeoutMS])); err == nil && ms > 0 {
		o.ActionTimeout = time.Duration(ms) * time.Millisecond
	}
	if n, err := strconv.Atoi(strings.TrimSpace(settings[SettingSnapshotBudget])); err == nil && n > 0 {
		o.SnapshotBudget = n
	}
	if w, h, ok := strings.Cut(strings.ToLower(strings.TrimSpace(settings[SettingViewport])), "x"); ok {
		wi, werr := strconv.Atoi(strings.TrimSpace(w))
		hi, herr := strconv.Atoi(strings.TrimSpace(h))
		if werr == nil && herr == nil && wi > 0 && hi > 0 && wi <= 10_000 && hi <= 10_000 {
			o.Width, o.Height = wi, hi
		}
	}
	if o.StateDir == "" {
		if d := os.Getenv("YAGENT_STATE_DIR"); d != "" {
			o.StateDir = d
		} else if home, err := os.UserHomeDir(); err == nil {
			o.StateDir = filepath.Join(home, ".yagent", "state")
		}
	}
	return o
}

// viewport is the pages' viewport size.
func (o Options) viewport() (w, h int) {
	if o.Width <= 0 || o.Height <= 0 {
		return 1280, 720
	}
	return o.Width, o.Height
}

func (o Options) withDefaults() Options {
	if o.ActionTimeout <= 0 {
		o.ActionTimeout = 30 * time.Second
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 30 * time.Second
	}
	if o.SettleTimeout <= 0 {
		o.SettleTimeout = 10 * time.Second
	}
	if o.SnapshotBudget <= 0 {
		o.SnapshotBudget = DefaultSnapshotBudget
	}
	if o.Logger == nil {
		o.Logger = hclog.L()
	}
	return o
}
