package cgroup

import (
	"strings"
	"testing"
)

const hybridMountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

func TestParseMountinfo_FindsCgroup2WhereverItIs(t *testing.T) {
	cases := []struct {
		name, info string
		want       []mount
	}{
		{"hybrid", hybridMountinfo, []mount{{root: "/", point: "/sys/fs/cgroup/unified"}}},
		{"unified", "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
			[]mount{{root: "/", point: "/sys/fs/cgroup"}}},
		{"container read-only", "700 690 0:26 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n",
			[]mount{{root: "/docker/abc", point: "/sys/fs/cgroup", readOnly: true}}},
		{"escaped point", `41 31 0:38 / /mnt/cg\040two rw - cgroup2 none rw` + "\n",
			[]mount{{root: "/", point: "/mnt/cg two"}}},
		{"v1 only", "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n", nil},
	}
	for _, c := range cases {
		got := parseMountinfo(c.info)
		if len(got) != len(c.want) {
			t.Errorf("%s: mounts = %+v, want %+v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: mount %d = %+v, want %+v", c.name, i, got[i], c.want[i])
			}
		}
	}
}

func TestParseOwnCgroup_ReadsTheV2Line(t *testing.T) {
	own, err := parseOwnCgroup("4:memory:/x\n1:cpu:/\n0::/user.slice/session-2.scope\n")
	if err != nil || own != "/user.slice/session-2.scope" {
		t.Errorf("own = %q, %v; want /user.slice/session-2.scope", own, err)
	}
	if _, err := parseOwnCgroup("4:memory:/x\n1:cpu:/\n"); err == nil || !strings.Contains(err.Error(), "v1 only") {
		t.Errorf("v1-only err = %v, want it to say cgroup v1 only", err)
	}
}

func TestLocate_JoinsTheMountAndTheOwnCgroup(t *testing.T) {
	cases := []struct {
		name   string
		mounts []mount
		own    string
		want   string
		errHas string
	}{
		{"root mount", []mount{{root: "/", point: "/sys/fs/cgroup/unified"}}, "/", "/sys/fs/cgroup/unified", ""},
		{"nested", []mount{{root: "/", point: "/sys/fs/cgroup"}}, "/user.slice/a.scope", "/sys/fs/cgroup/user.slice/a.scope", ""},
		{"namespaced mount root", []mount{{root: "/docker/abc", point: "/sys/fs/cgroup"}}, "/docker/abc/sub", "/sys/fs/cgroup/sub", ""},
		{"prefix is not a parent", []mount{{root: "/docker/ab", point: "/sys/fs/cgroup"}}, "/docker/abc", "", "no cgroup2 mount shows"},
		{"none", nil, "/", "", "not mounted"},
	}
	for _, c := range cases {
		got, _, err := locate(c.mounts, c.own)
		if c.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), c.errHas) {
				t.Errorf("%s: err = %v, want it to say %q", c.name, err, c.errHas)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: dir = %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func TestParseV1Mounts_FindsEachControllersHierarchy(t *testing.T) {
	info := hybridMountinfo + `50 31 0:40 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
51 31 0:41 /lxc/c1 /sys/fs/cgroup/pids ro,relatime - cgroup cgroup rw,pids
52 31 0:42 / /sys/fs/cgroup/memory2 rw - cgroup cgroup rw,memory
`
	got := parseV1Mounts(info, "pids", "memory", "hugetlb")
	want := map[string]mount{
		"memory": {root: "/", point: "/sys/fs/cgroup/memory"},
		"pids":   {root: "/lxc/c1", point: "/sys/fs/cgroup/pids", readOnly: true},
	}
	if len(got) != len(want) || got["memory"] != want["memory"] || got["pids"] != want["pids"] {
		t.Errorf("v1 mounts = %+v, want %+v", got, want)
	}
	// Co-mounted controllers share one hierarchy.
	got = parseV1Mounts("60 31 0:43 / /cg/both rw - cgroup cgroup rw,memory,pids\n", "pids", "memory")
	if got["pids"].point != "/cg/both" || got["memory"].point != "/cg/both" {
		t.Errorf("co-mounted = %+v, want both at /cg/both", got)
	}
}

func TestParseOwnV1_ReadsEachControllersLine(t *testing.T) {
	got := parseOwnV1("9:name=systemd:/\n8:pids:/a/b\n4:memory,hugetlb:/m (deleted)\n0::/\n", "pids", "memory", "cpu")
	if len(got) != 2 || got["pids"] != "/a/b" || got["memory"] != "/m" {
		t.Errorf("own v1 = %+v, want pids /a/b and memory /m", got)
	}
}
