package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/yagent/yagent/host/config"
)

// TestLoad_NetworkLayers: a project only adds denies; the admin's deny
// entries hold under every layer; the admin's unlisted: deny makes the
// admin's allow list the ceiling the lower layers' entries only narrow;
// otherwise the admin's allow entries join the others'. Each entry names
// the layer it came from.
func TestLoad_NetworkLayers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name              string
		files             map[string]string
		allow, deny       []string
		unlisted          string
		warn              string // a warning must hold this; "" none about the network
		origin, originSay string // Origins[origin] must end with a layer holding originSay
	}{
		{"a project adds a deny, its allow dropped", map[string]string{
			userConfig:    "network: {allow: [example.com]}\n",
			projectConfig: "network: {allow: [evil.example], deny: [ads.example], unlisted: deny}\n",
		}, []string{"example.com"}, []string{"ads.example"}, "deny", "network.allow ignored", "network.deny[ads.example]", "project "},
		{"a project cannot turn unlisted back to ask", map[string]string{
			userConfig:    "network: {allow: [a.example], unlisted: deny}\n",
			projectConfig: "network: {unlisted: ask}\n",
		}, []string{"a.example"}, nil, "deny", "network.unlisted: ask ignored", "network.unlisted", "user "},
		{"the admin's deny joins", map[string]string{
			userConfig:    "network: {allow: [example.com], deny: [a.example]}\n",
			managedConfig: "network: {deny: [metadata.example]}\n",
		}, []string{"example.com"}, []string{"a.example", "metadata.example"}, "", "", "network.deny[metadata.example]", "managed "},
		{"the admin's allow joins when unlisted hosts ask", map[string]string{
			userConfig:    "network: {allow: [example.com]}\n",
			managedConfig: "network: {allow: [docs.corp.example]}\n",
		}, []string{"example.com", "docs.corp.example"}, nil, "", "", "network.allow[example.com]", "user "},
		{"under the admin's unlisted deny the lower allows narrow", map[string]string{
			userConfig:    "network: {allow: [api.github.com, example.com, '*.x.corp.example', 10.1.2.3]}\n",
			managedConfig: "network: {allow: ['*.github.com', '*.corp.example', 10.0.0.0/8, npmjs.org], unlisted: deny}\n",
		}, []string{"api.github.com", "*.x.corp.example", "10.1.2.3"}, nil, "deny", "", "network.unlisted", "managed "},
		{"a lower list outside the admin's gives the admin's", map[string]string{
			userConfig:    "network: {allow: [example.com, github.com], unlisted: ask}\n",
			managedConfig: "network: {allow: ['*.github.com'], unlisted: deny}\n",
		}, []string{"*.github.com"}, nil, "deny", "none of example.com, github.com is within the managed network.allow", "network.allow[*.github.com]", "managed "},
		{"a project cannot widen the admin's ceiling", map[string]string{
			projectConfig: "network: {allow: [evil.example], unlisted: ask}\n",
			managedConfig: "network: {allow: [example.com], unlisted: deny}\n",
		}, []string{"example.com"}, nil, "deny", "network.allow", "network.unlisted", "managed "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tt.files)
			ld, err := config.Load(f.opts(nil, nil))
			if err != nil {
				t.Fatal(err)
			}
			n := ld.Profile.Network
			if !slices.Equal(n.Allow, tt.allow) || !slices.Equal(n.Deny, tt.deny) || n.Unlisted != tt.unlisted {
				t.Errorf("network %+v; want allow %q deny %q unlisted %q", n, tt.allow, tt.deny, tt.unlisted)
			}
			joined := strings.Join(ld.Warnings, "\n")
			if tt.warn != "" && !strings.Contains(joined, tt.warn) {
				t.Errorf("warnings %q, want one naming %q", ld.Warnings, tt.warn)
			}
			if tt.warn == "" && strings.Contains(joined, "network") {
				t.Errorf("warnings %q, want none about the network", ld.Warnings)
			}
			if o := ld.Origins[tt.origin]; len(o) == 0 || !strings.Contains(o[len(o)-1], tt.originSay) {
				t.Errorf("Origins[%s] = %q, want the last naming %q (all: %v)", tt.origin, o, tt.originSay, ld.Origins)
			}
		})
	}
}
