package actors

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// Once the submitter is answered, the operation actor lets go of its reply
// function (and the request's reply subject it holds): every live
// operation used to keep one.
func TestOperationDropsSubmitReplyOnceAnswered(t *testing.T) {
	as := actor.NewActorSystem()
	defer as.Shutdown()
	cfg := DefaultConfig()
	sink := as.Root.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	deps := Deps{Events: nopEvents{}, Signals: nopSignals{}, Store: memStore{}, Epoch: 1}
	spec := &pb.OperationSpec{Tasks: []*pb.TaskSpec{{Name: "t", JobCount: 1}}}
	o := newOperationActor(&cfg, deps, sink, "op-1", "", spec, nil, cfg.Now(), nil, jobProgress{}, opShared{})().(*operationActor)
	pid := as.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return o }))

	answers := make(chan string, 2)
	as.Root.Send(pid, &admitted{reply: func(r *pb.StartOperationResponse, e *pb.Error) {
		answers <- r.GetOperationId() + e.GetMessage()
	}})
	if got := await(t, answers, "submit answer"); got != "op-1" {
		t.Fatalf("answer %q, want op-1", got)
	}
	// The actor lets go of it before it answers (the answer orders the
	// read after the write).
	if o.submitReply != nil {
		t.Fatal("the operation actor still holds its submit reply after answering")
	}
}

// blockingStore fails its first write once the test releases it, and counts
// every write.
type blockingStore struct {
	entered, release chan struct{}
	puts             atomic.Int32
}

func (s *blockingStore) Put(context.Context, *pb.OperationStatus) error {
	if s.puts.Add(1) == 1 {
		s.entered <- struct{}{}
		<-s.release
		return errors.New("stream unavailable")
	}
	return nil
}

func (*blockingStore) List(context.Context) ([]*pb.OperationStatus, error) { return nil, nil }

// spawnDoneRecorder spawns a stand-in tree actor that hands on the ids of
// the operationDone messages it gets.
func spawnDoneRecorder(as *actor.ActorSystem) (*actor.PID, <-chan scheduler.OperationID) {
	done := make(chan scheduler.OperationID, 4)
	pid := as.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*operationDone); ok {
			done <- m.id
		}
	}))
	return pid, done
}

// An operation whose first write failed was never acknowledged: its
// admission is undone once, and nothing of it is written after, not even
// when one of its jobs reports its end before the actor goes (that used to
// write the operation again, store the status of an operation its submitter
// was told does not exist, and undo the admission a second time).
func TestOperationUndoneAfterFailedFirstWriteIsNeverWritten(t *testing.T) {
	as := actor.NewActorSystem()
	defer as.Shutdown()
	cfg := DefaultConfig()
	tree, done := spawnDoneRecorder(as)
	finals := make(chan pb.OperationState, 4)
	root := as.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*statusUpdate); ok && m.final {
			finals <- m.status.GetState()
		}
	}))
	store := &blockingStore{entered: make(chan struct{}, 1), release: make(chan struct{})}
	deps := Deps{Events: nopEvents{}, Signals: nopSignals{}, Store: store, Epoch: 1}
	spec := &pb.OperationSpec{Tasks: []*pb.TaskSpec{{Name: "t", JobCount: 2}}}
	trees := []*opTree{{name: "default", pid: tree, ledger: newLedger("default", &cfg, 0, nil), running: true}}
	o := newOperationActor(&cfg, deps, root, "op-1", "", spec, trees, cfg.Now(), nil, jobProgress{}, opShared{})().(*operationActor)
	pid := as.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return o }))

	answers := make(chan *pb.Error, 2)
	as.Root.Send(pid, &admitted{
		results: []*admitResult{{tree: "default", running: true}},
		reply:   func(_ *pb.StartOperationResponse, e *pb.Error) { answers <- e },
	})
	await(t, store.entered, "first write")
	// A job starts while the first write is in flight.
	as.Root.Send(pid, &jobStarted{node: "n1"})
	close(store.release)
	if e := await(t, answers, "submit answer"); e.GetCode() != pb.ErrorCode_ERROR_CODE_UNAVAILABLE {
		t.Fatalf("submit answer %v, want UNAVAILABLE", e)
	}
	if id := await(t, done, "undo"); id != "op-1" {
		t.Fatalf("undo of %q, want op-1", id)
	}
	if st := await(t, finals, "final status"); st != pb.OperationState_OPERATION_STATE_FAILED {
		t.Fatalf("final status %v, want FAILED", st)
	}
	// The job ends before the actor goes.
	as.Root.Send(pid, &jobFinished{node: "n1", state: pb.JobState_JOB_STATE_COMPLETED})
	got := make(chan *pb.OperationStatus, 1)
	as.Root.Send(pid, &GetOperation{ID: "op-1", Reply: func(st *pb.OperationStatus, _ *pb.Error) { got <- st }})
	st := await(t, got, "status")
	// The answer orders the reads after the actor handled the job's end.
	if o.persisting || o.dirty {
		t.Fatalf("the undone operation is being written again (persisting %v, dirty %v)", o.persisting, o.dirty)
	}
	if n := store.puts.Load(); n != 1 {
		t.Fatalf("%d writes, want only the failed first one", n)
	}
	if st.GetState() != pb.OperationState_OPERATION_STATE_FAILED || st.GetJobs().GetCompleted() != 1 {
		t.Fatalf("status %v, want FAILED with the job counted", st)
	}
	// Its admission was undone once: the tree hears nothing more (the
	// tree actor's mailbox is checked by a probe it gets after what the
	// operation actor sent it).
	as.Root.Send(tree, &operationDone{id: "probe"})
	if id := await(t, done, "probe"); id != "probe" {
		t.Fatalf("admission of %q undone again", id)
	}
}
