package actors

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/sharetree/sharetree/internal/failpoint"
	"github.com/sharetree/sharetree/scheduler"
)

// A node's report of a completed job is acknowledged only once the
// completion is stored: an agent forgets a finished job when it is
// acknowledged, so a completion acknowledged and then lost in a crash
// would run again. An operation stores its completed jobs with its status,
// but those writes are paced (Config.ProgressPersistPeriod,
// Config.ProgressWriteRate) and one per completion would be far too many.
// So completions go to the completions journal first: the journalWriter
// writes them in batches (one fsynced write carries every completion that
// arrived while the previous one was written), tells each node actor which
// of its jobs are stored, and the node actor acknowledges them in the next
// response. Batches are dropped once the statuses stored since have their
// completions (journalFloor); a restarted scheduler adds those it finds to
// the revived operations' completed jobs (mergeJournal).
//
// Failed jobs take the same path: a failure counts towards its operation's
// max_failed_job_count, and a failure acknowledged and then forgotten in a
// crash would give the operation more attempts than it allows. The
// journal's failures are added to a revived operation's failed-job count
// unless its stored status names them (OperationStatus.failed_job_ids;
// job ids carry the leader epoch, so a failure before a restart and one
// after it never share an id).

const (
	// journalMaxBatch bounds one batch's job ids (about 100 KiB, well
	// under NATS's default 1 MiB payload limit).
	journalMaxBatch = 4096
	// journalTrimEvery is the least time between two trims of the journal.
	journalTrimEvery = time.Second
	// journalRetryMin and journalRetryMax bound the wait before a failed
	// write is tried again (doubling).
	journalRetryMin = 100 * time.Millisecond
	journalRetryMax = 5 * time.Second
)

// journalKind says what a journalInput is.
type journalKind uint8

const (
	// journalAppend: a completed (or, with failed, a failed) job to store
	// (op, jobID, node, idx).
	journalAppend journalKind = iota
	// journalCovered: op's stored status has its completions up to idx.
	journalCovered
	// journalDropped: op is over, its final status stored.
	journalDropped
)

// journalInput is one thing the operations and the root tell the writer, in
// the order they told it.
type journalInput struct {
	kind  journalKind
	op    string
	jobID string
	// node is the node actor to tell once the job is stored.
	node *actor.PID
	idx  uint64
	// failed: the job failed (journalAppend).
	failed bool
}

// completionsStored tells a node actor that finished jobs it reported
// (completed or failed) are in the journal: their finish can be
// acknowledged.
type completionsStored struct{ ids []string }

// journalWriter owns the completions journal (see the comment above).
// append, covered and dropped may be called from any goroutine and never
// block; one goroutine of its own writes.
type journalWriter struct {
	j       CompletionJournal
	root    *actor.RootContext
	logger  *slog.Logger
	timeout time.Duration
	// clock paces the trims and the writes (wall time: it decides nothing
	// but how often the journal is written and asked to drop batches).
	clock func() time.Time
	// interval is the least time between the starts of two writes
	// (Config.JournalBatchInterval, capped at half the heartbeat period).
	interval time.Duration
	// after waits between writes (time.After; tests replace it).
	after func(time.Duration) <-chan time.Time

	mu     sync.Mutex
	queue  []journalInput
	closed bool
	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}

	// owed are the revived operations whose completions were found only in
	// the journal (read-only after newJournalWriter).
	owed map[string]bool

	// Owned by run.
	floor    journalFloor
	next     uint64 // one past the last batch written or found
	trimmed  uint64 // the journal holds no batch below it
	lastTrim time.Time
	// rounds counts the writer's passes over its queue (the first, at
	// start, trims what no revived operation needs).
	rounds atomic.Uint64
	// Counters for JournalStats.
	batches, completions, failedJobs, writeFailures, trims atomic.Uint64
	queued, needing                                        atomic.Int64
}

// JournalStats are the completions journal's counters (System.JournalStats).
type JournalStats struct {
	// Batches, Completions and FailedJobs count the batches written and
	// the completed and failed jobs in them; WriteFailures the writes
	// that failed (their jobs wait and are written again).
	Batches, Completions, FailedJobs, WriteFailures uint64
	// Trims counts the trims of batches no operation needs any more.
	Trims uint64
	// Queued is how many inputs wait to be written; Needing how many
	// operations have completions only in the journal.
	Queued, Needing int64
}

// stats returns the writer's counters.
func (w *journalWriter) stats() JournalStats {
	return JournalStats{Batches: w.batches.Load(), Completions: w.completions.Load(), FailedJobs: w.failedJobs.Load(), WriteFailures: w.writeFailures.Load(),
		Trims: w.trims.Load(), Queued: w.queued.Load(), Needing: w.needing.Load()}
}

// newJournalWriter makes the writer of journal j; found are the batches
// the journal held at start and owed the revived operations whose
// completions are only in them (mergeJournal): those batches are kept
// until the operations store a status.
func newJournalWriter(j CompletionJournal, root *actor.RootContext, cfg *Config, found []JournalBatch, owed map[string]bool) *journalWriter {
	w := &journalWriter{j: j, root: root, logger: cfg.Logger, timeout: cfg.RequestTimeout, clock: time.Now,
		interval: min(cfg.JournalBatchInterval, cfg.HeartbeatPeriod/2), after: time.After,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), owed: owed}
	for _, b := range found {
		w.next = max(w.next, b.Seq+1)
		for _, ids := range [][]string{b.JobIDs, b.FailedJobIDs} {
			for _, id := range ids {
				if ref, ok := parseJobRef(id); ok && owed[string(ref.key.Operation)] {
					w.floor.note(string(ref.key.Operation), b.Seq, 0)
				}
			}
		}
	}
	w.needing.Store(int64(w.floor.needing()))
	w.wake <- struct{}{} // a first pass trims what nothing needs
	return w
}

// owes reports whether revived operation op's completions were found only
// in the journal: its first status write must cover them. A nil writer
// owes nothing.
func (w *journalWriter) owes(op string) bool { return w != nil && w.owed[op] }

// push queues an input and wakes the writer.
func (w *journalWriter) push(in journalInput) {
	w.mu.Lock()
	if !w.closed {
		w.queue = append(w.queue, in)
		w.queued.Store(int64(len(w.queue)))
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// append queues job jobID of operation op, which node reported completed
// (or, with failed, failed): the operation's journaled job number idx.
func (w *journalWriter) append(op, jobID string, failed bool, node *actor.PID, idx uint64) {
	w.push(journalInput{kind: journalAppend, op: op, jobID: jobID, failed: failed, node: node, idx: idx})
}

// covered tells that a stored status of op has its completions numbered up
// to idx.
func (w *journalWriter) covered(op string, idx uint64) {
	w.push(journalInput{kind: journalCovered, op: op, idx: idx})
}

// dropped tells that op is over (its final status stored) or will not
// run: its completions are no longer needed.
func (w *journalWriter) dropped(op string) { w.push(journalInput{kind: journalDropped, op: op}) }

// start runs the writer's goroutine.
func (w *journalWriter) start() { go w.run() }

// close stops the writer once its write in flight (if any) ended.
// Completions still queued are not written: their nodes were not told, so
// they report them again to the next scheduler.
func (w *journalWriter) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.done
		return
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.done
}

// take removes from the queue the inputs of the next batch: up to
// journalMaxBatch completions and what was queued between them.
func (w *journalWriter) take() []journalInput {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, appends := 0, 0
	for n < len(w.queue) {
		if w.queue[n].kind == journalAppend {
			if appends == journalMaxBatch {
				break
			}
			appends++
		}
		n++
	}
	in := make([]journalInput, n)
	copy(in, w.queue)
	w.queue = w.queue[n:]
	if len(w.queue) == 0 {
		w.queue = nil
	}
	w.queued.Store(int64(len(w.queue)))
	return in
}

// pending reports whether inputs wait in the queue.
func (w *journalWriter) pending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue) > 0
}

// putBack returns inputs that could not be written to the queue's front.
func (w *journalWriter) putBack(in []journalInput) {
	w.mu.Lock()
	w.queue = append(in, w.queue...)
	w.queued.Store(int64(len(w.queue)))
	w.mu.Unlock()
}

func (w *journalWriter) run() {
	defer close(w.done)
	defer func() {
		st := w.stats()
		w.logger.Info("completions journal writer stopped", "batches", st.Batches, "completions", st.Completions,
			"write_failures", st.WriteFailures, "trims", st.Trims, "unwritten", st.Queued)
	}()
	retry := journalRetryMin
	var trimTimer *time.Timer
	var trimC <-chan time.Time
	var lastWrite time.Time
	for {
		select {
		case <-w.stop:
			return
		case <-w.wake:
		case <-trimC:
			trimC = nil
		}
		for {
			// Let the next batch gather what arrives until interval has
			// passed since the last write began.
			if wait := w.interval - w.clock().Sub(lastWrite); wait > 0 && w.pending() {
				select {
				case <-w.stop:
					return
				case <-w.after(wait):
				}
			}
			in := w.take()
			if len(in) == 0 {
				break
			}
			lastWrite = w.clock()
			if !w.write(in) {
				w.putBack(in)
				select {
				case <-w.stop:
					return
				case <-time.After(retry):
				}
				retry = min(2*retry, journalRetryMax)
				continue
			}
			retry = journalRetryMin
		}
		if wait := w.trim(); wait > 0 && trimC == nil {
			if trimTimer == nil {
				trimTimer = time.NewTimer(wait)
			} else {
				trimTimer.Reset(wait)
			}
			trimC = trimTimer.C
		}
		w.rounds.Add(1)
	}
}

// write stores the jobs of in as one batch, then applies in, in order,
// and tells the nodes. It reports false when the batch could not be
// stored (nothing of in is applied then).
func (w *journalWriter) write(in []journalInput) bool {
	var completed, failed []string
	for _, x := range in {
		switch {
		case x.kind != journalAppend:
		case x.failed:
			failed = append(failed, x.jobID)
		default:
			completed = append(completed, x.jobID)
		}
	}
	var seq uint64
	if len(completed)+len(failed) > 0 {
		failpoint.Hit(failpoint.JournalBeforeWrite, nil)
		ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
		s, err := w.j.Append(ctx, completed, failed)
		cancel()
		if err != nil {
			w.writeFailures.Add(1)
			w.logger.Warn("completions journal: write failed; the jobs wait, unacknowledged", "completed", len(completed), "failed", len(failed), "err", err)
			return false
		}
		seq = s
		w.next = max(w.next, s+1)
		w.batches.Add(1)
		w.completions.Add(uint64(len(completed)))
		w.failedJobs.Add(uint64(len(failed)))
		failpoint.Hit(failpoint.JournalAfterWrite, nil)
	}
	// The nodes to tell, in the order they first appear.
	var nodes []*actor.PID
	stored := map[string][]string{} // by the node actor's id
	for _, x := range in {
		switch x.kind {
		case journalAppend:
			w.floor.note(x.op, seq, x.idx)
			if _, ok := stored[x.node.Id]; !ok {
				nodes = append(nodes, x.node)
			}
			stored[x.node.Id] = append(stored[x.node.Id], x.jobID)
		case journalCovered:
			w.floor.covered(x.op, x.idx)
		case journalDropped:
			w.floor.drop(x.op)
		}
	}
	w.needing.Store(int64(w.floor.needing()))
	for _, pid := range nodes {
		w.root.Send(pid, &completionsStored{ids: stored[pid.Id]})
	}
	return true
}

// trim drops the batches no operation needs. It looks for them at most
// once every journalTrimEvery (the floor walks every operation that needs
// a batch, and a busy writer writes hundreds of batches a second); it
// returns how long to wait before looking again (0: nothing to trim).
func (w *journalWriter) trim() time.Duration {
	now := w.clock()
	if wait := journalTrimEvery - now.Sub(w.lastTrim); wait > 0 {
		return wait
	}
	w.lastTrim = now
	floor := w.floor.floor(w.next)
	if floor <= w.trimmed {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	if err := w.j.Trim(ctx, floor); err != nil {
		w.logger.Warn("completions journal: trim failed", "below", floor, "err", err)
		return journalTrimEvery
	}
	w.trimmed = floor
	w.trims.Add(1)
	return 0
}

// journaling reports whether completed jobs wait for the journal before
// their finish is acknowledged.
func (n *nodeActor) journaling() bool { return n.deps.Journal != nil }

// await makes completed job id wait for the journal before its finish is
// acknowledged.
func (n *nodeActor) await(id string, ledger *Ledger, op scheduler.OperationID, now time.Time) {
	if n.awaiting == nil {
		n.awaiting = map[string]awaitingJob{}
	}
	n.awaiting[id] = awaitingJob{ledger: ledger, op: op, since: now}
}

// awaited reports whether a completed job the node reports again can be
// acknowledged: the journal stored it, or its operation is over, its final
// status stored, and it has not answered within RequestTimeout (an
// operation actor ends only after its final status, which has every
// completion, is stored). An operation leaves its ledger as it finishes,
// before its final status is stored: until then its completions wait.
func (n *nodeActor) awaited(a awaitingJob, now time.Time) bool {
	return a.stored || (now.Sub(a.since) > n.cfg.RequestTimeout && !a.ledger.needsCompletions(a.op))
}
