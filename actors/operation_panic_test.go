package actors

import (
	"errors"
	"fmt"
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
		if !errors.Is(err, ErrActorPanic) || !strings.Contains(err.Error(), "injected failure in the operation actor") || !strings.Contains(err.Error(), op) {
			t.Errorf("fatal: %v; want ErrActorPanic naming the operation and the panic", err)
		}
	case <-time.After(5 * time.Second):
		st := h.status(op)
		t.Fatalf("an operation actor's panic is not fatal; the operation now says %v, %d running, %d completed",
			st.GetState(), st.GetJobs().GetRunning(), st.GetJobs().GetCompleted())
	}
}

// panicOnKind panics, once, when an event of kind is published: in the
// actor that publishes it.
type panicOnKind struct {
	kind subjects.EventKind
	done atomic.Bool
}

func (p *panicOnKind) Publish(_ string, kind subjects.EventKind, _ *pb.Event) {
	if kind == p.kind && p.done.CompareAndSwap(false, true) {
		panic(fmt.Sprintf("injected failure publishing a %s event", kind))
	}
}

// Reliability test 22: a panic in a node actor (publishing its jobs'
// events) or in a tree actor (publishing the fair-share snapshot) is fatal,
// as in the operation actor: the actor stops, System.Fatal delivers an
// ErrActorPanic naming the actor, the message it was handling and the
// panic.
func TestActorPanicsAreFatal(t *testing.T) {
	for _, c := range []struct {
		kind            subjects.EventKind
		actor, handling string
		trigger         func(h *adoptHarness)
	}{
		// A job that completes is published in the node's job events.
		// (The heartbeat is sent without waiting: the panic leaves it
		// unanswered.)
		{subjects.EventJob, "node:n1", "*actors.passResult", func(h *adoptHarness) {
			_, started := h.submitStarted(1)
			h.sys.Heartbeat(&NodeHeartbeat{Heartbeat: &pb.Heartbeat{NodeId: "n1", Incarnation: "i1", Sequence: h.seq["n1"] + 1,
				ResourceLimits: &pb.Resources{Cpu: 8}, FinishedJobs: []*pb.FinishedJob{{JobId: started[0], State: pb.JobState_JOB_STATE_COMPLETED}}},
				Reply: func(*pb.HeartbeatResponse, *pb.Error) {}})
		}},
		// The tree publishes a fair-share snapshot after its first update,
		// at start.
		{subjects.EventFairShare, "tree:physical", "", func(*adoptHarness) {}},
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			h := startHarness(t, func(d *Deps) { d.Events = &panicOnKind{kind: c.kind} })
			c.trigger(h)
			select {
			case err := <-h.sys.Fatal():
				msg := err.Error()
				if !errors.Is(err, ErrActorPanic) || !strings.Contains(msg, c.actor+" panicked handling "+c.handling) ||
					!strings.Contains(msg, fmt.Sprintf("injected failure publishing a %s event", c.kind)) {
					t.Errorf("fatal: %v; want ErrActorPanic naming %s, the message %q and the panic", err, c.actor, c.handling)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("a panic publishing a %s event is not fatal", c.kind)
			}
		})
	}
}
