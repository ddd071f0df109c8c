package actors

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// panicOnUpdateEvents panics, once, when an operation's update is
// published (a bug in the operation actor, as an injected failure).
type panicOnUpdateEvents struct{ done atomic.Bool }

func (p *panicOnUpdateEvents) Publish(_ string, kind subjects.EventKind, ev *pb.Event) {
	if kind == subjects.EventOperation && strings.HasPrefix(ev.GetOperation().GetReason(), "runtime parameters updated") && p.done.CompareAndSwap(false, true) {
		panic("injected failure in the operation actor")
	}
}

// A panic in an operation actor is fatal, as in every other actor: the
// process stops and revives from the store. Restarted by its parent's
// default supervision, the actor came back from its producer with its
// state wiped (pending, acknowledged to nobody, its completed jobs
// forgotten), and its next write overwrote the stored status with that.
func TestOperationActorPanicIsFatal(t *testing.T) {
	h := startHarness(t, func(d *Deps) { d.Events = &panicOnUpdateEvents{} })
	op, started := h.submitStarted(2)
	h.beat("n1", started[1:], map[string]pb.JobState{started[0]: pb.JobState_JOB_STATE_COMPLETED})
	h.waitJobs(op, 1, 1)

	h.sys.Update(&UpdateOperation{ID: op, Req: &pb.UpdateOperationRequest{Weight: proto.Float64(2)},
		Reply: func(*pb.UpdateOperationResponse, *pb.Error) {}})
	select {
	case err := <-h.sys.Fatal():
		t.Logf("fatal: %v", err)
	case <-time.After(5 * time.Second):
		st := h.status(op)
		t.Fatalf("an operation actor's panic is not fatal; the operation now says %v, %d running, %d completed",
			st.GetState(), st.GetJobs().GetRunning(), st.GetJobs().GetCompleted())
	}
}
