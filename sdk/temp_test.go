package sdk

import "testing"

func TestTempFolder_MapAndShown(t *testing.T) {
	t.Parallel()
	tf := &TempFolder{Dir: "/var/tmp/yagent-0/s.1.2.ab", Over: []string{"/tmp", "/dev/shm"}}
	for _, c := range []struct {
		in, want string
		mapped   bool
	}{
		{"/tmp", tf.Dir, true},
		{"/tmp/a", tf.Dir + "/a", true},
		{"/tmp/a/b", tf.Dir + "/a/b", true},
		{"/dev/shm/sem.x", tf.Dir + "/sem.x", true},
		// The host's own path of the folder is, for the session's
		// commands, a path in the folder too: nothing under a temp
		// root reaches the machine's.
		{"/tmp/yagent-0/other", tf.Dir + "/yagent-0/other", true},
		{"/var/tmp/a", "/var/tmp/a", false}, // not in Over: the machine's
		{"/tmpx/a", "/tmpx/a", false},
		{"/tm", "/tm", false},
		{"/dev/shmem", "/dev/shmem", false},
		{"/etc/passwd", "/etc/passwd", false},
	} {
		got, ok := tf.Map(c.in)
		if got != c.want || ok != c.mapped {
			t.Errorf("Map(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.mapped)
		}
	}
	for in, want := range map[string]string{
		tf.Dir:               "/tmp",
		tf.Dir + "/a/b":      "/tmp/a/b",
		tf.Dir + "x/a":       tf.Dir + "x/a",
		"/var/tmp/yagent-0":  "/var/tmp/yagent-0",
		"/home/u/project/ok": "/home/u/project/ok",
	} {
		if got := tf.Shown(in); got != want {
			t.Errorf("Shown(%q) = %q, want %q", in, got, want)
		}
		if back, _ := tf.Map(tf.Shown(in)); tf.Holds(in) && back != in {
			t.Errorf("Map(Shown(%q)) = %q, want it back", in, back)
		}
	}
	if tf.TMPDIR() != "/tmp" {
		t.Errorf("TMPDIR with /tmp bound: %q, want /tmp", tf.TMPDIR())
	}
}

func TestTempFolder_UnboundMapsNothing(t *testing.T) {
	t.Parallel()
	var none *TempFolder
	if got, ok := none.Map("/tmp/a"); ok || got != "/tmp/a" {
		t.Errorf("nil Map(/tmp/a) = %q, %v; want it unchanged", got, ok)
	}
	tf := &TempFolder{Dir: "/var/tmp/yagent-0/s.1.2.ab"}
	if got, ok := tf.Map("/tmp/a"); ok || got != "/tmp/a" {
		t.Errorf("Map(/tmp/a) with no temp folder bound = %q, %v; want the machine's /tmp/a", got, ok)
	}
	if got := tf.Shown(tf.Dir + "/a"); got != tf.Dir+"/a" {
		t.Errorf("Shown with nothing bound = %q, want the folder's own path", got)
	}
	if tf.TMPDIR() != tf.Dir {
		t.Errorf("TMPDIR with nothing bound: %q, want the folder itself", tf.TMPDIR())
	}
	if !tf.Holds(tf.Dir+"/a") || tf.Holds("/var/tmp/yagent-0") || tf.Holds(tf.Dir+"x") {
		t.Error("Holds: want the folder and what is beneath it, nothing else")
	}
}
