package tools

import "testing"

// TestStateCache_DropSession: a session's ended reads are forgotten,
// another session's are kept, and the eviction order loses the dropped
// keys too.
func TestStateCache_DropSession(t *testing.T) {
	c := newStateCache(8)
	c.put("ended", "/w/a", fileState{})
	c.put("other", "/w/a", fileState{})
	c.put("ended", "/w/b", fileState{})
	c.dropSession("ended")
	for _, p := range []string{"/w/a", "/w/b"} {
		if _, ok := c.get("ended", p); ok {
			t.Errorf("the ended session's read of %s is still remembered", p)
		}
	}
	if _, ok := c.get("other", "/w/a"); !ok {
		t.Error("the other session's read was dropped with the ended one")
	}
	if len(c.order) != 1 {
		t.Errorf("eviction order holds %d keys, want the other session's 1", len(c.order))
	}
}
