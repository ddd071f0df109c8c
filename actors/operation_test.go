package actors

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
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
	o := newOperationActor(&cfg, deps, sink, "op-1", spec, nil, cfg.Now())().(*operationActor)
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
