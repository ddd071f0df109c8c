package treeconf

import "sync"

// keyedMutex is one mutex per name, created on first use and dropped when
// nobody holds or waits for it (so names from requests for trees that do
// not exist do not accumulate).
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*refMutex
}

type refMutex struct {
	sync.Mutex
	refs int
}

// lock locks name's mutex and returns its unlock function.
func (k *keyedMutex) lock(name string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*refMutex{}
	}
	m, ok := k.locks[name]
	if !ok {
		m = &refMutex{}
		k.locks[name] = m
	}
	m.refs++
	k.mu.Unlock()
	m.Lock()
	return func() {
		m.Unlock()
		k.mu.Lock()
		m.refs--
		if m.refs == 0 {
			delete(k.locks, name)
		}
		k.mu.Unlock()
	}
}
