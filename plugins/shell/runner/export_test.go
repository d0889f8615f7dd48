package runner

import "slices"

// LiveProcessGroups returns the process groups of the foreground commands
// in flight, sorted.
func (m *Manager) LiveProcessGroups() []int {
	g := &m.groups
	g.mu.Lock()
	defer g.mu.Unlock()
	ids := make([]int, 0, len(g.groups))
	for id := range g.groups {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
