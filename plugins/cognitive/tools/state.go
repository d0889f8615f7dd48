package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/yagent/yagent/sdk"
)

// sessionState is what the cognitive tools remember for one session.
type sessionState struct {
	Explanation string     `json:"explanation,omitempty"`
	Plan        []planStep `json:"plan,omitempty"`
	Todos       []todo     `json:"todos,omitempty"`
}

func (s sessionState) clone() sessionState {
	s.Plan = slices.Clone(s.Plan)
	s.Todos = slices.Clone(s.Todos)
	return s
}

// store keeps each session's state, in memory and, when it has a folder,
// as JSON on disk so a restarted plugin picks up where it left off. It is
// safe for concurrent use; calls of one session are serialized, calls of
// different sessions are not.
type store struct {
	dir string // "" = memory only

	mu       sync.Mutex
	sessions map[string]*sessionSlot
}

type sessionSlot struct {
	mu     sync.Mutex
	loaded bool
	state  sessionState
}

// stateFileName is the session's file inside its session folder.
const stateFileName = "cognitive.json"

func newStore(dir string) *store {
	return &store{dir: dir, sessions: map[string]*sessionSlot{}}
}

func (s *store) slot(id string) *sessionSlot {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl, ok := s.sessions[id]
	if !ok {
		sl = &sessionSlot{}
		s.sessions[id] = sl
	}
	return sl
}

// read returns a copy of the session's state.
func (s *store) read(id string) (sessionState, error) {
	sl := s.slot(id)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	err := s.load(id, sl)
	return sl.state.clone(), err
}

// update applies fn to a copy of the session's state; when fn succeeds the
// copy becomes the state and is written to disk. A failed write keeps the
// new state in memory and is returned as saveErr.
func (s *store) update(id string, fn func(*sessionState) error) (next sessionState, saveErr error, err error) {
	sl := s.slot(id)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	loadErr := s.load(id, sl)
	draft := sl.state.clone()
	if err := fn(&draft); err != nil {
		return sessionState{}, nil, err
	}
	sl.state = draft
	saveErr = errors.Join(loadErr, s.save(id, draft))
	return draft.clone(), saveErr, nil
}

// end forgets session id: its plan and todos, in memory and on disk. It
// waits for a call of the session in flight.
func (s *store) end(id string) error {
	s.mu.Lock()
	sl := s.sessions[id]
	delete(s.sessions, id)
	s.mu.Unlock()
	if sl != nil {
		sl.mu.Lock()
		defer sl.mu.Unlock()
	}
	if s.dir == "" {
		return nil
	}
	if err := os.Remove(s.path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the session's state: %w", err)
	}
	// The session's folder goes with its last file; other plugins' files
	// (a background command's log) keep it.
	_ = os.Remove(filepath.Dir(s.path(id)))
	return nil
}

// load reads the session's file once; an unreadable file leaves the state
// empty and is reported.
func (s *store) load(id string, sl *sessionSlot) error {
	if sl.loaded {
		return nil
	}
	sl.loaded = true
	if s.dir == "" {
		return nil
	}
	b, err := os.ReadFile(s.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read saved state: %w", err)
	}
	var st sessionState
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("saved state %s does not decode, starting empty: %w", s.path(id), err)
	}
	sl.state = st
	return nil
}

// save writes the state atomically, private to the user.
func (s *store) save(id string, st sessionState) error {
	if s.dir == "" {
		return nil
	}
	path := s.path(id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cognitive-*.json")
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("save state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	return nil
}

func (s *store) path(id string) string {
	return filepath.Join(sdk.SessionDir(s.dir, id), stateFileName)
}

// Note kinds of state trouble.
const (
	noteNotSaved  = "state_not_saved"
	noteNotLoaded = "state_not_loaded"
)

// withStateNote tells the model, through a note, that the session's state
// could not be written or read back from disk: what it sees holds for this
// session but would not survive a restart of the plugin.
func withStateNote(res *sdk.Result, kind string, err error) *sdk.Result {
	if err != nil {
		res.Notes = append(res.Notes, sdk.Note{Kind: kind, Detail: err.Error()})
	}
	return res
}
