package surface

import (
	"context"
	"sync"
)

// serialLocks holds one lock per (session, family) key, created on demand
// and dropped when nobody holds or waits for it.
type serialLocks struct {
	mu sync.Mutex
	m  map[string]*serialLock
}

type serialLock struct {
	ch   chan struct{}
	refs int
}

// acquire takes the lock of key, calling onWait (when not nil) if it must
// wait; it gives up when ctx ends.
func (l *serialLocks) acquire(ctx context.Context, key string, onWait func()) (release func(), err error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*serialLock{}
	}
	e := l.m[key]
	if e == nil {
		e = &serialLock{ch: make(chan struct{}, 1)}
		l.m[key] = e
	}
	e.refs++
	l.mu.Unlock()

	drop := func() {
		l.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(l.m, key)
		}
		l.mu.Unlock()
	}
	select {
	case e.ch <- struct{}{}:
	default:
		if onWait != nil {
			onWait()
		}
		select {
		case e.ch <- struct{}{}:
		case <-ctx.Done():
			drop()
			return nil, ctx.Err()
		}
	}
	return func() {
		<-e.ch
		drop()
	}, nil
}
