package actors

import (
	"sync/atomic"
	"time"
)

// workerPool is a protoactor dispatcher that runs mailboxes on long-lived
// goroutines. The default dispatcher starts a goroutine per mailbox
// activation, and every such goroutine grows its stack from the runtime's
// small initial size to what an actor's message needs (protoactor's frames,
// the ledger's placement pass, protobuf encoding): stack growth and copying
// were ≈ 6 % of the CPU at 5,000 heartbeats/s. A pool worker keeps its
// grown stack between activations. A mailbox is handed to an idle worker
// (which the Go scheduler runs next, as it would a new goroutine), else to a
// new worker while there are fewer than max, else to a plain goroutine.
// Workers idle for idleTimeout exit.
type workerPool struct {
	throughput  int
	max         int32
	idleTimeout time.Duration
	work        chan func()
	workers     atomic.Int32
}

func newWorkerPool(throughput, max int, idleTimeout time.Duration) *workerPool {
	return &workerPool{throughput: throughput, max: int32(max), idleTimeout: idleTimeout, work: make(chan func())}
}

// Throughput is how many messages a mailbox runs before yielding.
func (p *workerPool) Throughput() int { return p.throughput }

// Schedule runs fn (a mailbox's processing) on a worker.
func (p *workerPool) Schedule(fn func()) {
	select {
	case p.work <- fn:
		return
	default:
	}
	if p.workers.Add(1) <= p.max {
		go p.worker(fn)
		return
	}
	p.workers.Add(-1)
	go fn()
}

func (p *workerPool) worker(fn func()) {
	defer p.workers.Add(-1)
	idle := time.NewTimer(p.idleTimeout)
	defer idle.Stop()
	for {
		fn()
		idle.Reset(p.idleTimeout)
		select {
		case fn = <-p.work:
		case <-idle.C:
			return
		}
	}
}
