package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/yagent/yagent/host/config"
)

// TestLoad_PluginSwitch: plugins.NAME.enabled switches a plugin off from
// the user's layers, the admin's off holds over a user's on, and a value
// that is not a boolean is refused naming the key.
func TestLoad_PluginSwitch(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		files map[string]string
		on    bool
	}{
		{"unset is on", nil, true},
		{"user off", map[string]string{userConfig: "plugins: {hello: {enabled: false}}\n"}, false},
		{"user on over a user profile's off", map[string]string{
			"home/.yagent/profiles/mine.yaml": "plugins: {hello: {enabled: false}}\n",
			userConfig:                        "profile: mine\nplugins: {hello: {enabled: true}}\n",
		}, true},
		{"managed off over a user's on", map[string]string{
			managedConfig: "plugins: {hello: {enabled: false}}\n",
			userConfig:    "plugins: {hello: {enabled: true}}\n",
		}, false},
		{"managed on leaves a user's off", map[string]string{
			managedConfig: "plugins: {hello: {enabled: true}}\n",
			userConfig:    "plugins: {hello: {enabled: false}}\n",
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ld, err := config.Load(newFixture(t, tt.files).opts(nil, nil))
			if err != nil {
				t.Fatal(err)
			}
			if got := ld.Profile.PluginEnabled("hello"); got != tt.on {
				t.Errorf("PluginEnabled(hello) = %v, want %v (plugins %v)", got, tt.on, ld.Profile.Plugins)
			}
		})
	}
	_, err := config.Load(newFixture(t, map[string]string{userConfig: "plugins: {hello: {enabled: maybe}}\n"}).opts(nil, nil))
	if err == nil || !strings.Contains(err.Error(), "plugins.hello.enabled") || !strings.Contains(err.Error(), "true or false") {
		t.Errorf("enabled: maybe: err %v; want it refused naming the key and the values", err)
	}
	_, err = config.Load(newFixture(t, map[string]string{userConfig: "families: [fs, hello]\n"}).opts(nil, nil))
	if err == nil || !strings.Contains(err.Error(), `unknown family "hello"`) || !strings.Contains(err.Error(), "plugins.hello.enabled") {
		t.Errorf("families: [fs, hello]: err %v; want the unknown family named with the way to switch a plugin", err)
	}
}

// TestLoad_PluginDevDir: the user's config and the flags set the dev
// folder, ~ expanded; the admin's wins; a relative path is refused from
// any layer, as it would name a folder of each workspace.
func TestLoad_PluginDevDir(t *testing.T) {
	t.Parallel()
	f := newFixture(t, map[string]string{userConfig: "plugin_dev_dir: ~/dev/plugins\n"})
	ld, err := config.Load(f.opts(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(f.home, "dev", "plugins"); ld.Profile.PluginDevDir != want {
		t.Errorf("plugin_dev_dir %q, want %q", ld.Profile.PluginDevDir, want)
	}
	if o := ld.Origins["plugin_dev_dir"]; len(o) != 1 || !strings.HasPrefix(o[0], "user ") {
		t.Errorf("origins %q, want the user's config", o)
	}
	if ld, err = config.Load(f.opts(nil, map[string]any{"plugin_dev_dir": "/opt/flag"})); err != nil || ld.Profile.PluginDevDir != "/opt/flag" {
		t.Errorf("with the flag: %v %q, want /opt/flag", err, ld.Profile.PluginDevDir)
	}
	m := newFixture(t, map[string]string{userConfig: "plugin_dev_dir: /opt/user\n", managedConfig: "plugin_dev_dir: /opt/admin\n"})
	if ld, err = config.Load(m.opts(nil, nil)); err != nil || ld.Profile.PluginDevDir != "/opt/admin" {
		t.Errorf("managed: %v %q, want /opt/admin", err, ld.Profile.PluginDevDir)
	}
	for _, files := range []map[string]string{
		{userConfig: "plugin_dev_dir: bin\n"},
		{managedConfig: "plugin_dev_dir: ./bin\n"},
	} {
		_, err := config.Load(newFixture(t, files).opts(nil, nil))
		if err == nil || !strings.Contains(err.Error(), "plugin_dev_dir") || !strings.Contains(err.Error(), "not absolute") {
			t.Errorf("%v: err %v; want the relative path refused", files, err)
		}
	}
}
