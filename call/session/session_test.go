package session

import (
	"context"
	"slices"
	"sync"
	"testing"
)

func TestNew_EmptyIDGetsUUID(t *testing.T) {
	t.Parallel()
	a, b := New(""), New("")
	if len(a.ID()) != 36 || a.ID() == b.ID() {
		t.Fatalf("New(\"\") ids = %q, %q; want two distinct uuids", a.ID(), b.ID())
	}
	if got := New("cli").ID(); got != "cli" {
		t.Fatalf("New(\"cli\").ID() = %q", got)
	}
}

func TestSession_LoadedAndPasses(t *testing.T) {
	t.Parallel()
	s := New("s")
	if !s.MarkLoaded("b") || !s.MarkLoaded("a") || s.MarkLoaded("b") {
		t.Fatal("MarkLoaded: want true, true, then false for a repeat")
	}
	if !s.IsLoaded("a") || s.IsLoaded("c") {
		t.Fatal("IsLoaded disagrees with MarkLoaded")
	}
	if got := s.Loaded(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Loaded() = %v, want [a b]", got)
	}
	if s.Granted("x") {
		t.Fatal("a fresh session has no pass")
	}
	s.GrantTool("x")
	if !s.Granted("x") || s.Granted("y") {
		t.Fatal("GrantTool must cover exactly its tool")
	}
	s.GrantAll()
	if !s.Granted("y") {
		t.Fatal("GrantAll must cover every tool")
	}
}

func TestSession_ConcurrentUse(t *testing.T) {
	t.Parallel()
	s := New("")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s.MarkLoaded(string(rune('a' + i)))
			s.GrantTool("t")
			_ = s.Loaded()
			_ = s.Answerer()
		})
	}
	wg.Wait()
	if len(s.Loaded()) != 8 {
		t.Fatalf("Loaded() = %v, want 8 names", s.Loaded())
	}
}

func TestContext_RoundTrip(t *testing.T) {
	t.Parallel()
	s := New("x")
	if FromContext(context.Background()) != nil {
		t.Fatal("FromContext of a bare context must be nil")
	}
	if FromContext(NewContext(context.Background(), s)) != s {
		t.Fatal("FromContext(NewContext(s)) != s")
	}
}

func TestSession_ApprovedPaths(t *testing.T) {
	t.Parallel()
	s := New("s")
	if len(s.ApprovedPaths()) != 0 {
		t.Fatal("a fresh session has approved paths")
	}
	s.ApprovePaths("/srv/a", "", "/srv/b", "/srv/a")
	got := s.ApprovedPaths()
	if !slices.Equal(got, []string{"/srv/a", "/srv/b"}) {
		t.Fatalf("ApprovedPaths() = %v, want [/srv/a /srv/b]", got)
	}
	got[0] = "/etc"
	if s.ApprovedPaths()[0] != "/srv/a" {
		t.Fatal("ApprovedPaths must return a copy")
	}
}
