package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/yagent/yagent/sdk"
)

func TestTodoWrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		input string
		want  string // exact text, or the error message fragment
		code  string
	}{
		{"records and renders",
			`{"todos":[{"id":"1","content":"write the parser","status":"completed","priority":"high"},{"id":"2","content":"test it","status":"in_progress"},{"id":"3","content":"ship","status":"pending","priority":"low"}]}`,
			"Todo list updated. 3 items: 1 completed, 1 in progress, 1 pending.\n[x] 1: write the parser (high)\n[>] 2: test it\n[ ] 3: ship (low)", ""},
		{"clears", `{"todos":[]}`, "Todo list updated. The todo list is empty.", ""},
		{"duplicate id", `{"todos":[{"id":"1","content":"a","status":"pending"},{"id":"1","content":"b","status":"pending"}]}`,
			`todos[0] and todos[1] share the id "1"`, sdk.CodeInvalidInput},
		{"empty id", `{"todos":[{"id":"","content":"a","status":"pending"}]}`, "todos[0].id is empty", sdk.CodeInvalidInput},
		{"empty content", `{"todos":[{"id":"1","content":"","status":"pending"}]}`, "todos[0].content is empty", sdk.CodeInvalidInput},
		{"bad status", `{"todos":[{"id":"1","content":"a","status":"doing"}]}`, `todos[0].status is "doing"`, sdk.CodeInvalidInput},
		{"bad priority", `{"todos":[{"id":"1","content":"a","status":"pending","priority":"urgent"}]}`, `todos[0].priority is "urgent"`, sdk.CodeInvalidInput},
		{"missing list", `{}`, "todos is missing", sdk.CodeInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := newStore("")
			mustCall(t, todoWriteTool(st), "s", `{"todos":[{"id":"old","content":"before","status":"pending"}]}`)
			res, err := call(t, todoWriteTool(st), "s", tt.input)
			after, _ := st.read("s")
			if tt.code != "" {
				if te := toolErr(t, err, tt.code); !strings.Contains(te.Message, tt.want) {
					t.Fatalf("message %q, want it to contain %q", te.Message, tt.want)
				}
				if len(after.Todos) != 1 || after.Todos[0].ID != "old" {
					t.Fatalf("a refused list changed the todos: %+v", after.Todos)
				}
				return
			}
			if err != nil || res.Text != tt.want {
				t.Fatalf("todo_write(%s) = %v, %v\nwant %q", tt.input, res, err, tt.want)
			}
			read := mustCall(t, todoReadTool(st), "s", `{}`)
			if !strings.HasSuffix(res.Text, strings.TrimSuffix(read.Text, " Use todo_write to record tasks.")) {
				t.Fatalf("todo_read = %q, want the list just written (%q)", read.Text, res.Text)
			}
		})
	}
}

func TestTodoRead_Empty(t *testing.T) {
	t.Parallel()
	res := mustCall(t, todoReadTool(newStore("")), "s", `{}`)
	if res.Text != "The todo list is empty. Use todo_write to record tasks." {
		t.Fatalf("todo_read = %q", res.Text)
	}
	b, _ := json.Marshal(res.Data)
	if string(b) != `{"todos":[]}` {
		t.Fatalf("todo_read data = %s, want an empty list", b)
	}
}

func TestTodo_SessionIsolation(t *testing.T) {
	t.Parallel()
	st := newStore(t.TempDir())
	write, read := todoWriteTool(st), todoReadTool(st)
	mustCall(t, write, "alice", `{"todos":[{"id":"1","content":"alice's task","status":"pending"}]}`)
	mustCall(t, write, "bob", `{"todos":[{"id":"1","content":"bob's task","status":"pending"}]}`)
	for session, want := range map[string]string{"alice": "alice's task", "bob": "bob's task", "carol": "The todo list is empty."} {
		res := mustCall(t, read, session, `{}`)
		if !strings.Contains(res.Text, want) || strings.Count(res.Text, "task") > 1 {
			t.Errorf("todo_read in %s = %q, want only %q", session, res.Text, want)
		}
	}
}

// Many writers on one session: every read sees one whole list that some
// writer wrote, and the file on disk holds the last one.
func TestTodo_ConcurrentWriters(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := newStore(dir)
	write, read := todoWriteTool(st), todoReadTool(st)
	const writers, rounds = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds*2)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				session := "shared"
				if r%4 == 3 {
					session = fmt.Sprintf("own-%d", w)
				}
				in := fmt.Sprintf(`{"todos":[{"id":"a","content":"w%d r%d","status":"pending"},{"id":"b","content":"w%d r%d","status":"completed"}]}`, w, r, w, r)
				if _, err := call(t, write, session, in); err != nil {
					errs <- err
				}
				res, err := call(t, read, "shared", `{}`)
				if err != nil {
					errs <- err
					continue
				}
				todos := res.Data.(map[string]any)["todos"].([]todo)
				if len(todos) != 2 || todos[0].Content != todos[1].Content {
					errs <- fmt.Errorf("torn list: %+v", todos)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	mem, _ := st.read("shared")
	b, err := os.ReadFile(filepath.Join(dir, "sessions", "shared", stateFileName))
	if err != nil {
		t.Fatal(err)
	}
	var disk sessionState
	if err := json.Unmarshal(b, &disk); err != nil {
		t.Fatal(err)
	}
	if len(disk.Todos) != 2 || disk.Todos[0] != mem.Todos[0] {
		t.Fatalf("disk holds %+v, memory %+v", disk.Todos, mem.Todos)
	}
}

// A restarted plugin reads each session's state back from its folder.
func TestStore_Persists(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := newStore(dir)
	mustCall(t, todoWriteTool(first), "s1", `{"todos":[{"id":"1","content":"survive","status":"in_progress"}]}`)
	mustCall(t, updatePlanTool(first), "s1", `{"plan":[{"step":"plan survives","status":"pending"}]}`)
	mustCall(t, todoWriteTool(first), "../../escape", `{"todos":[{"id":"1","content":"odd id","status":"pending"}]}`)

	fi, err := os.Stat(filepath.Join(dir, "sessions", "s1", stateFileName))
	if err != nil {
		t.Fatalf("state file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file mode %v, want it private (0600)", fi.Mode())
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "sessions"))
	for _, e := range entries {
		if strings.Contains(e.Name(), "..") {
			t.Fatalf("session folder %q climbs out", e.Name())
		}
	}

	again := newStore(dir)
	res := mustCall(t, todoReadTool(again), "s1", `{}`)
	if !strings.Contains(res.Text, "survive") {
		t.Fatalf("after restart todo_read = %q", res.Text)
	}
	s, _ := again.read("s1")
	if len(s.Plan) != 1 || s.Plan[0].Step != "plan survives" {
		t.Fatalf("after restart plan = %+v", s.Plan)
	}
	if res := mustCall(t, todoReadTool(again), "../../escape", `{}`); !strings.Contains(res.Text, "odd id") {
		t.Fatalf("after restart, odd session id: %q", res.Text)
	}
}

func TestStore_BrokenStateIsNoted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "sessions", "s", stateFileName)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := mustCall(t, todoReadTool(newStore(dir)), "s", `{}`)
	if len(res.Notes) != 1 || res.Notes[0].Kind != noteNotLoaded || !strings.Contains(res.Text, "empty") {
		t.Fatalf("todo_read over a broken file = %+v, want an empty list and a %s note", res, noteNotLoaded)
	}

	blocked := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	res = mustCall(t, todoWriteTool(newStore(blocked)), "s", `{"todos":[{"id":"1","content":"kept","status":"pending"}]}`)
	if len(res.Notes) != 1 || res.Notes[0].Kind != noteNotSaved || !strings.Contains(res.Text, "kept") {
		t.Fatalf("todo_write with an unwritable state folder = %+v, want the list and a %s note", res, noteNotSaved)
	}
}
