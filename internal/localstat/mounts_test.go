//go:build linux && (amd64 || arm64)

package localstat

import "testing"

// A mountinfo of a machine with a network home, a FUSE mount with a space
// in its name, and a container's overlay root.
const sampleMountinfo = `22 1 0:21 / / rw,relatime shared:1 - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w
23 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:5 - proc proc rw
24 22 8:1 / /var rw,relatime shared:7 - ext4 /dev/sda1 rw
25 22 0:40 / /home rw,relatime shared:9 - nfs4 server:/home rw,vers=4.2
26 24 0:41 / /var/my\040mount rw,nosuid,nodev,relatime shared:10 - fuse.sshfs me@host: rw,user_id=0
27 24 0:42 / /var/tmp rw,nosuid,nodev shared:11 - tmpfs tmpfs rw
`

func TestParseMountinfo_RemoteMountsTakeTheirPathsOffTheRawPath(t *testing.T) {
	tab, ok := parseMountinfo(sampleMountinfo)
	if !ok {
		t.Fatal("the sample did not parse")
	}
	for _, c := range []struct {
		path  string
		local bool
	}{
		{"/", true},
		{"/var/tmp/yagent-tmp-0/s.1", true},
		{"/work/repo/main.go", true},
		{"/home", false},              // the mount point itself
		{"/home/me/repo/a.go", false}, // below it
		{"/homework/a.go", true},      // a name that only starts like it
		{"/var/my mount/x", false},    // an escaped space
		{"/var/my", true},
		{"/proc/self/status", false}, // proc is not a disk's
		{"relative/path", false},
		{"", false},
	} {
		if got := tab.local(c.path); got != c.local {
			t.Errorf("local(%q) = %v, want %v", c.path, got, c.local)
		}
	}
}

func TestParseMountinfo_RemoteRootTakesEveryPathOff(t *testing.T) {
	tab, ok := parseMountinfo("1 0 0:1 / / rw - nfs server:/ rw\n2 1 8:1 / /data rw - ext4 /dev/sda1 rw\n")
	if !ok {
		t.Fatal("did not parse")
	}
	for _, p := range []string{"/", "/etc/passwd", "/data/x"} {
		if tab.local(p) {
			t.Errorf("local(%q) under a network root = true", p)
		}
	}
}

func TestParseMountinfo_UnreadableTableIsRefused(t *testing.T) {
	for _, text := range []string{"1 0 0:1\n", "garbage\n"} {
		if _, ok := parseMountinfo(text); ok {
			t.Errorf("parseMountinfo(%q) ok, want refused", text)
		}
	}
	// A line with no "-" separator has no type: its mount point is
	// taken as remote.
	tab, ok := parseMountinfo("1 0 0:1 / / rw - ext4 /dev/sda1 rw\n2 1 0:2 / /odd rw shared:1\n")
	if !ok || tab.local("/odd/x") || !tab.local("/other") {
		t.Errorf("a line without a type: ok %v, /odd/x local %v, /other local %v", ok, tab.local("/odd/x"), tab.local("/other"))
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`/a\040b`:    "/a b",
		`/tab\011x`:  "/tab\tx",
		`/bs\134`:    `/bs\`,
		`/plain`:     "/plain",
		`/short\04`:  `/short\04`,
		`/notoct\08`: `/notoct\08`,
	} {
		if got := unescape(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
}
