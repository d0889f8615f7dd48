package main

import (
	"reflect"
	"testing"

	"github.com/yagent/yagent/host/pluginmgr"
)

// TestChoosePlugins: pin NAME pins exactly NAME, whatever sorts after it.
func TestChoosePlugins(t *testing.T) {
	var all []*pluginmgr.Plugin
	for _, n := range []string{"cognitive", "fs", "hello", "search", "world"} {
		all = append(all, &pluginmgr.Plugin{Name: n})
	}
	names := func(ps []*pluginmgr.Plugin) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	for _, tc := range []struct {
		args, want []string
	}{
		{nil, []string{"cognitive", "fs", "hello", "search", "world"}},
		{[]string{"hello"}, []string{"hello"}},
		{[]string{"cognitive"}, []string{"cognitive"}},
		{[]string{"world", "fs"}, []string{"fs", "world"}},
		{[]string{"fs", "fs"}, []string{"fs"}},
	} {
		got, err := choosePlugins(all, tc.args)
		if err != nil || !reflect.DeepEqual(names(got), tc.want) {
			t.Errorf("choosePlugins(%v) = %v, %v; want %v", tc.args, names(got), err, tc.want)
		}
	}
	if _, err := choosePlugins(all, []string{"hello", "nope"}); err == nil {
		t.Error("choosePlugins with an unknown name: no error")
	}
}
