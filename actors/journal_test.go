package actors

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// memJournal is an in-memory CompletionJournal whose writes can be made to
// fail, as a store that is down.
type memJournal struct {
	mu      sync.Mutex
	batches []JournalBatch
	next    uint64
	down    bool
	trimmed uint64 // the highest Trim asked
}

func newMemJournal(found ...[]string) *memJournal {
	j := &memJournal{next: 1}
	for _, ids := range found {
		j.batches = append(j.batches, JournalBatch{Seq: j.next, JobIDs: ids})
		j.next++
	}
	return j
}

func (j *memJournal) Append(_ context.Context, completed, failed []string) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.down {
		return 0, errors.New("store down")
	}
	seq := j.next
	j.next++
	j.batches = append(j.batches, JournalBatch{Seq: seq, JobIDs: slices.Clone(completed), FailedJobIDs: slices.Clone(failed)})
	return seq, nil
}

func (j *memJournal) Trim(_ context.Context, seq uint64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.trimmed = max(j.trimmed, seq)
	j.batches = slices.DeleteFunc(j.batches, func(b JournalBatch) bool { return b.Seq < seq })
	return nil
}

func (j *memJournal) Load(context.Context) ([]JournalBatch, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.batches), nil
}

func (j *memJournal) setDown(down bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.down = down
}

// trimmedBelow is the highest sequence a Trim asked for.
func (j *memJournal) trimmedBelow() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.trimmed
}

// failedIDs lists the failed jobs' ids the journal holds, in order.
func (j *memJournal) failedIDs() []string {
	return j.ids(func(b JournalBatch) []string { return b.FailedJobIDs })
}

// jobIDs lists the completed jobs' ids the journal holds, in order.
func (j *memJournal) jobIDs() []string {
	return j.ids(func(b JournalBatch) []string { return b.JobIDs })
}

// ids lists the ids of of each batch the journal holds, in order.
func (j *memJournal) ids(of func(JournalBatch) []string) []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []string
	for _, b := range j.batches {
		out = append(out, of(b)...)
	}
	return out
}

func acks(r *pb.HeartbeatResponse) []string { return r.GetAcknowledgedFinishedJobs() }

// A completed or failed job's finish is acknowledged only once the
// journal stored it (a failure counts towards max_failed_job_count: one
// acknowledged and then forgotten would give the operation an attempt too
// many). The journal keeps them until the operation's status has them.
func TestCompletionAcknowledgedOnceStored(t *testing.T) {
	j := newMemJournal()
	h := startHarness(t, func(d *Deps) { d.Journal = j })
	op, started := h.submitStarted(2)
	a, b := started[0], started[1]

	// The store is down: the completion and the failure wait,
	// unacknowledged, however often the node reports them.
	j.setDown(true)
	if got := acks(h.beat("n1", []string{b}, map[string]pb.JobState{a: pb.JobState_JOB_STATE_COMPLETED})); len(got) != 0 {
		t.Fatalf("acknowledged %v with the journal down", got)
	}
	h.waitJobs(op, 1, 1)
	for range 3 {
		if got := acks(h.beat("n1", []string{b}, map[string]pb.JobState{a: pb.JobState_JOB_STATE_COMPLETED})); len(got) != 0 {
			t.Fatalf("acknowledged %v with the journal down", got)
		}
	}
	both := map[string]pb.JobState{a: pb.JobState_JOB_STATE_COMPLETED, b: pb.JobState_JOB_STATE_FAILED}
	for range 3 {
		if got := acks(h.beat("n1", nil, both)); len(got) != 0 {
			t.Fatalf("acknowledged %v with the journal down", got)
		}
	}
	testutil.WaitFor(t, 10*time.Second, "the operation to count the completion and the failure", func() bool {
		j := h.status(op).GetJobs()
		return j.GetCompleted() == 1 && j.GetFailed() == 1
	})
	if st := h.status(op); st.GetJobs().GetFailed() != 1 || !cmp.Equal(st.GetFailedJobIds(), []string{b}) {
		t.Errorf("failed %d %v, want 1 [%s] (counted once however often reported)", st.GetJobs().GetFailed(), st.GetFailedJobIds(), b)
	}

	// The store is back: the next reports are acknowledged. (A job
	// acknowledged is reported no more, as an agent drops it; one reported
	// again after its acknowledgement, as after a lost response, is
	// journaled again: see unknownFinished.)
	j.setDown(false)
	acked := map[string]bool{}
	testutil.WaitFor(t, 10*time.Second, "the completion and the failure to be acknowledged once stored", func() bool {
		report := map[string]pb.JobState{}
		for id, st := range both {
			if !acked[id] {
				report[id] = st
			}
		}
		for _, id := range acks(h.beat("n1", nil, report)) {
			acked[id] = true
		}
		return acked[a] && acked[b]
	})
	if diff := cmp.Diff([]string{a}, j.jobIDs()); diff != "" {
		t.Errorf("journal's completed jobs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{b}, j.failedIDs()); diff != "" {
		t.Errorf("journal's failed jobs (-want +got):\n%s", diff)
	}
	// The writer looks for batches to trim once it wrote one: it trims
	// below the one holding the completion, not past it.
	testutil.WaitFor(t, 10*time.Second, "the journal writer to look for batches to trim", func() bool {
		return j.trimmedBelow() >= 1
	})
	if got := j.trimmedBelow(); got > 1 {
		t.Errorf("the journal was trimmed below %d while the operation's status does not have its completion", got)
	}

	// The failed job runs again and completes: the operation is over, its
	// final status stored, and the journal is trimmed.
	var retry []string
	testutil.WaitFor(t, 10*time.Second, "the failed job's retry to start", func() bool {
		retry = startIDs(h.beat("n1", nil, nil))
		return len(retry) == 1
	})
	h.beat("n1", retry, nil)
	h.beat("n1", nil, map[string]pb.JobState{retry[0]: pb.JobState_JOB_STATE_COMPLETED})
	testutil.WaitFor(t, 10*time.Second, "the operation to complete", func() bool {
		return h.status(op).GetState() == pb.OperationState_OPERATION_STATE_COMPLETED
	})
	testutil.WaitFor(t, 10*time.Second, "the journal to be trimmed", func() bool {
		return len(j.jobIDs())+len(j.failedIDs()) == 0
	})
	if st := h.status(op); st.GetJobs().GetFailed() != 1 || st.GetJobs().GetCompleted() != 2 {
		t.Errorf("jobs %v, want 2 completed, 1 failed", st.GetJobs())
	}
}

// heldStore is an OperationStore whose writes wait until released.
type heldStore struct {
	release chan struct{}
	waiting atomic.Int32
}

func (s *heldStore) Put(ctx context.Context, _ *pb.OperationStatus) error {
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *heldStore) List(context.Context) ([]*pb.OperationStatus, error) { return nil, nil }

// A restarted scheduler adds the completions the journal holds to its
// revived operations: they do not run again. Ids that are not jobs of the
// operation are skipped. The journal keeps the batches until the
// operation stored them in its status, and trims them after.
func TestRevivalAddsJournaledCompletions(t *testing.T) {
	j := newMemJournal([]string{"op-1-1.0.0.0", "not-a-job", "op-1-1.0.9.0"}, []string{"op-1-1.0.2.1", "op-gone-3.0.0.0"})
	store := &heldStore{release: make(chan struct{})}
	h := startHarness(t, func(d *Deps) { d.Journal, d.Store = j, store }, revivedOp("op-1-1", 4))
	testutil.WaitFor(t, 10*time.Second, "the revived operation's first write to wait and the journal's first pass", func() bool {
		return store.waiting.Load() > 0 && h.sys.journal.rounds.Load() > 0
	})
	want := []string{"op-1-1.0.0.0", "not-a-job", "op-1-1.0.9.0", "op-1-1.0.2.1", "op-gone-3.0.0.0"}
	if diff := cmp.Diff(want, j.jobIDs()); diff != "" {
		t.Fatalf("journal before the operation stored a status (-want +got):\n%s", diff)
	}
	close(store.release)
	h.clock.advance(11 * time.Second) // past the revival window
	h.waitJobs("op-1-1", 0, 2)
	var started []string
	testutil.WaitFor(t, 10*time.Second, "the jobs not in the journal to start", func() bool {
		started = append(started, startIDs(h.beat("n1", started, nil))...)
		return len(started) >= 2
	})
	slices.Sort(started)
	if diff := cmp.Diff([]string{"op-1-1.0.1.0.2", "op-1-1.0.3.0.2"}, started); diff != "" {
		t.Errorf("jobs started (-want +got):\n%s", diff)
	}
	testutil.WaitFor(t, 10*time.Second, "the journal to be trimmed once the status has its completions", func() bool {
		return len(j.jobIDs()) == 0
	})
}

// failingFirstStore fails its first n writes, then stores.
type failingFirstStore struct {
	n, puts atomic.Int32
}

func (s *failingFirstStore) Put(context.Context, *pb.OperationStatus) error {
	if s.puts.Add(1) <= s.n.Load() {
		return errors.New("stream unavailable")
	}
	return nil
}

func (*failingFirstStore) List(context.Context) ([]*pb.OperationStatus, error) { return nil, nil }

// A revived operation that cannot be admitted again is failed and stored;
// when that write fails it is retried, so the journal's batches for it
// are trimmed once it is stored (they were kept for good, and every batch
// after them with them).
func TestNotRevivedOperationIsStoredDespiteAFailedWrite(t *testing.T) {
	j := newMemJournal([]string{"op-1-1.0.0.0"})
	store := &failingFirstStore{}
	store.n.Store(2)
	op := revivedOp("op-1-1", 4)
	op.Spec.PoolTrees = []string{"gone"}
	startHarness(t, func(d *Deps) { d.Journal, d.Store = j, store }, op)
	testutil.WaitFor(t, 20*time.Second, "the journal to be trimmed once the failed operation is stored", func() bool {
		return len(j.jobIDs()) == 0
	})
	if got := store.puts.Load(); got < 3 {
		t.Errorf("%d writes, want the two failed ones and one that stored", got)
	}
}

// A node lost while its completion waits for the journal (down) reports
// the completion again when it comes back: its new node actor does not
// acknowledge it until the journal stored it (it used to at once, the job
// being done in the ledger, and a crash then ran it again).
func TestLostNodesWaitingCompletionIsStoredBeforeItsAck(t *testing.T) {
	j := newMemJournal()
	h := startHarness(t, func(d *Deps) { d.Journal = j })
	op, started := h.submitStarted(2)
	a, b := started[0], started[1]
	j.setDown(true)
	done := map[string]pb.JobState{a: pb.JobState_JOB_STATE_COMPLETED}
	if got := acks(h.beat("n1", []string{b}, done)); len(got) != 0 {
		t.Fatalf("acknowledged %v with the journal down", got)
	}
	h.waitJobs(op, 1, 1)

	// The node goes silent until it is lost: its node actor stops.
	h.clock.advance(DefaultConfig().NodeLostTimeout + time.Second)
	testutil.WaitFor(t, 10*time.Second, "the lost node's actor to stop", func() bool {
		return len(h.sys.router.all()) == 0
	})

	// It comes back, still reporting the completion, the journal still
	// down: not acknowledged.
	for range 3 {
		if got := acks(h.beat("n1", nil, done)); len(got) != 0 {
			t.Fatalf("acknowledged %v of the node that came back, with the journal down", got)
		}
	}
	j.setDown(false)
	testutil.WaitFor(t, 10*time.Second, "the completion to be acknowledged once stored", func() bool {
		return slices.Contains(acks(h.beat("n1", nil, done)), a)
	})
	if ids := j.jobIDs(); !slices.Contains(ids, a) {
		t.Errorf("journal %v has no %s after its acknowledgement", ids, a)
	}
}
