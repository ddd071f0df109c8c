package sim

import (
	"time"

	"github.com/sharetree/sharetree/scheduler/placement"
)

// eventKind orders the events of one instant: job ends, submissions, the
// fair-share update, the nodes' passes, then the sample.
type eventKind uint8

const (
	evJobEnd eventKind = iota
	evSubmit
	evUpdate
	evPass
	evSample
)

// event is something that happens at a virtual time.
type event struct {
	at   time.Duration
	kind eventKind
	// seq is the order events were made in: the last tie-break.
	seq uint64
	// node (evPass), op (evSubmit: the workload's index), job and gen
	// (evJobEnd: the run it ends; a job interrupted since has another).
	node int
	op   int
	job  placement.JobKey
	gen  uint64
}

// eventHeap is a min-heap of events by (at, kind, seq) (container/heap).
type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	a, b := &h[i], &h[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.seq < b.seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	ev := old[len(old)-1]
	*h = old[:len(old)-1]
	return ev
}
