package actors

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// nodeRouter maps node ids to node actors, spawning one on a node's first
// heartbeat. It is called from NATS callbacks, so it only locks a map and
// sends.
type nodeRouter struct {
	root  *actor.RootContext
	props func(id string, live *nodeLiveness) *actor.Props
	// base is the origin of the nodes' liveness stamps (see nodeLiveness).
	base time.Time

	// offline and lost count the nodes taken offline and declared lost
	// (System.NodeTransitions).
	offline, lost atomic.Uint64

	mu    sync.Mutex
	nodes map[string]*routedNode
}

// routedNode is a node actor and what it publishes about its liveness.
type routedNode struct {
	pid  *actor.PID
	live nodeLiveness
}

// nodeLiveness is what a node actor publishes for the liveness monitor, so
// that the monitor sends checks only to the nodes that need one instead of
// to every node every second (thousands of node actors woken at once, a
// burst every heartbeat's goroutines queued behind). Times are stamps:
// nanoseconds since base, a Config.Now reading taken when the router was
// made, 0 for none. A stamp is a difference of two Config.Now readings, so
// in production (time.Now) it is measured on the monotonic clock: the wall
// clock stepping by seconds or minutes (an NTP correction, an operator's
// `date -s`) neither takes a node offline nor keeps a silent one online.
// Unix nanoseconds would be wall time.
type nodeLiveness struct {
	base time.Time
	// heard is the node's last accepted heartbeat.
	heard atomic.Int64
	// inflight is when the heartbeat waiting for the placer was sent to it.
	inflight atomic.Int64
	// shed is when a heartbeat of the node was last shed (see
	// Config.MaxHeartbeatPasses): the node is alive, though not heard.
	shed atomic.Int64
}

// stamp is now as a stamp (at least 1: 0 is none).
func (l *nodeLiveness) stamp(now time.Time) int64 { return max(int64(now.Sub(l.base)), 1) }

// at is the time of a stamp, with base's monotonic reading.
func (l *nodeLiveness) at(stamp int64) time.Time { return l.base.Add(time.Duration(stamp)) }

// alive is the last time the node showed it is alive: its last accepted
// heartbeat or its last shed one (a stamp, 0: never).
func (l *nodeLiveness) alive() int64 { return max(l.heard.Load(), l.shed.Load()) }

// route sends msg to node id's actor, spawning it for a node it does not
// know. It reports false, sending nothing, when the actor's name is still
// taken by the actor of the same node declared lost a moment ago, which is
// stopping.
func (r *nodeRouter) route(id string, msg any) bool {
	r.mu.Lock()
	n, ok := r.nodes[id]
	if !ok {
		n = &routedNode{live: nodeLiveness{base: r.base}}
		pid, err := r.root.SpawnNamed(r.props(id, &n.live), "node:"+id)
		if err != nil {
			r.mu.Unlock()
			return false
		}
		n.pid = pid
		r.nodes[id] = n
	}
	r.mu.Unlock()
	r.root.Send(n.pid, msg)
	return true
}

// shed records that a heartbeat of node id was shed at now; it reports
// whether the node is known (an unknown node's shed heartbeat creates no
// session).
func (r *nodeRouter) shed(id string, now time.Time) bool {
	r.mu.Lock()
	n, ok := r.nodes[id]
	r.mu.Unlock()
	if ok {
		n.live.shed.Store(n.live.stamp(now))
	}
	return ok
}

// wentOffline counts a node taken offline.
func (r *nodeRouter) wentOffline() { r.offline.Add(1) }

// lostNode forgets a node declared lost, and counts it.
func (r *nodeRouter) lostNode(id string) {
	r.lost.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.nodes, id)
}

// all returns every node actor.
func (r *nodeRouter) all() []*actor.PID {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*actor.PID, 0, len(r.nodes))
	for _, n := range r.nodes {
		out = append(out, n.pid)
	}
	return out
}

// due returns the node actors a liveness check may change something for at
// now: silent for offline or more (the check takes them offline, then
// forgets them), or waiting longer than timeout for their placer (the
// check gives the heartbeat up).
func (r *nodeRouter) due(now time.Time, offline, timeout time.Duration) []*actor.PID {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*actor.PID
	for _, n := range r.nodes {
		t := n.live.stamp(now)
		heard, inflight := n.live.alive(), n.live.inflight.Load()
		if heard != 0 && t-heard >= int64(offline) || inflight != 0 && t-inflight > int64(timeout) {
			out = append(out, n.pid)
		}
	}
	return out
}

func (r *nodeRouter) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.nodes)
}
