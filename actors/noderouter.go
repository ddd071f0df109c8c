package actors

import (
	"sync"

	"github.com/asynkron/protoactor-go/actor"
)

// nodeRouter maps node ids to node actors, spawning one on a node's first
// heartbeat. It is called from NATS callbacks, so it only locks a map and
// sends.
type nodeRouter struct {
	root  *actor.RootContext
	props func(id string) *actor.Props

	mu    sync.Mutex
	nodes map[string]*actor.PID
}

func (r *nodeRouter) route(id string, msg any) {
	r.mu.Lock()
	pid, ok := r.nodes[id]
	if !ok {
		var err error
		pid, err = r.root.SpawnNamed(r.props(id), "node:"+id)
		if err != nil {
			// The name is taken by an actor that is stopping (a node lost a
			// moment ago); the agent retries on its next heartbeat.
			r.mu.Unlock()
			return
		}
		r.nodes[id] = pid
	}
	r.mu.Unlock()
	r.root.Send(pid, msg)
}

func (r *nodeRouter) remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.nodes, id)
}

// all returns every node actor.
func (r *nodeRouter) all() []*actor.PID {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*actor.PID, 0, len(r.nodes))
	for _, pid := range r.nodes {
		out = append(out, pid)
	}
	return out
}

func (r *nodeRouter) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.nodes)
}
