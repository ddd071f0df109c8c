package actors

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// switchedStorage is a StorageHealth a test turns on and off.
type switchedStorage struct{ down atomic.Bool }

func (s *switchedStorage) Available() bool { return !s.down.Load() }

// While the stores take no writes the scheduler starts no job (it fails
// closed), answers heartbeats and leaves running jobs alone; it starts
// them again once the stores are back.
func TestNoJobStartsWhileStorageIsUnavailable(t *testing.T) {
	storage := &switchedStorage{}
	h := startHarness(t, func(d *Deps) { d.Storage = storage })
	_, started := h.submitStarted(1) // one job runs
	storage.down.Store(true)
	submitted := make(chan string, 1)
	h.sys.Submit(&SubmitOperation{Spec: revivedOp("", 2).GetSpec(), Reply: func(r *pb.StartOperationResponse, e *pb.Error) {
		if e != nil {
			t.Errorf("submit: %v", e)
		}
		submitted <- r.GetOperationId()
	}})
	second := await(t, submitted, "the second submission")
	for range 5 {
		r := h.beat("n1", started, nil)
		if s := r.GetJobsToStart(); len(s) != 0 {
			t.Fatalf("jobs %v started with the storage unavailable", s)
		}
		if a := r.GetJobsToAbort(); len(a) != 0 {
			t.Fatalf("jobs %v aborted with the storage unavailable", a)
		}
	}
	storage.down.Store(false)
	var more []string
	testutil.WaitFor(t, 10*time.Second, "the second operation's jobs to start once the storage is back", func() bool {
		more = append(more, startIDs(h.beat("n1", append(started, more...), nil))...)
		return len(more) == 2
	})
	if st := h.status(second); st.GetState() != pb.OperationState_OPERATION_STATE_RUNNING {
		t.Errorf("second operation %v, want running", st.GetState())
	}
}
