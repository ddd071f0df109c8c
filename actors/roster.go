package actors

import (
	"context"
	"slices"
	"sync"
	"time"
)

// roster keeps Deps.Roster in step with the nodes this scheduler hears
// from: a node is added before it gets any job (nodeActor.rostered), and
// removed when it is declared lost, so a new leader knows which nodes may
// run jobs and waits for those to report (revival). The writes of one node
// are made in the order they were asked for; those of different nodes run
// side by side. A nil *roster keeps none (no Deps.Roster).
type roster struct {
	store NodeRoster
	cfg   *Config
	ctx   context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup
	// start is when the scheduler started, for sweep.
	start time.Time

	mu sync.Mutex
	// stored are the nodes the store holds, as the writes left it.
	stored map[string]bool
	// tail is each node's last write still running; the next one waits
	// for it.
	tail map[string]chan struct{}
	// unheard are the stored nodes loaded at start and not heard from
	// since; swept once they have been silent for NodeLostTimeout.
	unheard map[string]bool
	swept   bool
	closed  bool
}

func newRoster(store NodeRoster, cfg *Config, loaded []string, now time.Time) *roster {
	ctx, stop := context.WithCancel(context.Background())
	r := &roster{store: store, cfg: cfg, ctx: ctx, stop: stop, start: now,
		stored: map[string]bool{}, tail: map[string]chan struct{}{}, unheard: map[string]bool{}}
	for _, node := range loaded {
		r.stored[node], r.unheard[node] = true, true
	}
	return r
}

// has reports whether the store holds node, with no write of it running.
func (r *roster) has(node string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stored[node] && r.tail[node] == nil
}

// size is how many nodes the store holds, as the writes left it.
func (r *roster) size() int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.stored)
}

// heard records a heartbeat of node.
func (r *roster) heard(node string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.unheard, node)
}

// add stores node, then calls done with the outcome, on another
// goroutine.
func (r *roster) add(node string, done func(error)) {
	r.write(node, func(ctx context.Context) error { return r.store.Add(ctx, node) }, func(err error) {
		if err == nil {
			r.stored[node] = true
		}
	}, done)
}

// remove deletes node from the store (declared lost). A failed delete is
// logged: the node stays in the roster, and the next leader waits for it
// up to its JobRevivalTimeout, no longer.
func (r *roster) remove(node string) {
	if r == nil {
		return
	}
	r.write(node, func(ctx context.Context) error { return r.store.Remove(ctx, node) }, func(error) {
		delete(r.stored, node)
	}, func(err error) {
		if err != nil {
			r.cfg.Logger.Warn("lost node not removed from the node roster; the next leader waits for it", "node", node, "err", err)
		}
	})
}

// write runs op for node after the node's earlier writes, bounded by
// RequestTimeout; settle records its outcome under the lock, then done
// runs (nil: nothing). Nothing runs once the roster is closed.
func (r *roster) write(node string, op func(context.Context) error, settle func(error), done func(error)) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	prev, mine := r.tail[node], make(chan struct{})
	r.tail[node] = mine
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		if prev != nil {
			<-prev
		}
		ctx, cancel := context.WithTimeout(r.ctx, r.cfg.RequestTimeout)
		err := op(ctx)
		cancel()
		r.mu.Lock()
		settle(err)
		if r.tail[node] == mine {
			delete(r.tail, node)
		}
		r.mu.Unlock()
		close(mine)
		if done != nil {
			done(err)
		}
	}()
}

// sweep removes, once NodeLostTimeout has passed since the start, the
// nodes loaded at start that this scheduler never heard from: lost
// before it took over, or while no scheduler listened.
func (r *roster) sweep(now time.Time) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.swept || now.Sub(r.start) < r.cfg.NodeLostTimeout {
		r.mu.Unlock()
		return
	}
	r.swept = true
	var gone []string
	for node := range r.unheard {
		gone = append(gone, node)
	}
	clear(r.unheard)
	r.mu.Unlock()
	slices.Sort(gone)
	if len(gone) > 0 {
		r.cfg.Logger.Warn("nodes of the roster not heard from since this scheduler started are forgotten",
			"nodes", gone[:min(len(gone), 20)], "count", len(gone), "silent_for", now.Sub(r.start))
	}
	for _, node := range gone {
		r.remove(node)
	}
}

// close stops the writes still waiting and waits for those running.
func (r *roster) close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.stop()
	r.wg.Wait()
}
