package actors

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// A revived operation's id is known before its trees admitted it again
// (the root admits it tree by tree, and forwards requests meanwhile): an
// abort that reaches its actor before the admission's answer stays an
// abort. The answer used to set the aborted operation running again, in
// trees that had been told it was done: it stayed running forever, and
// was stored so.
func TestOperationAbortedBeforeItsAdmissionStaysAborted(t *testing.T) {
	as := actor.NewActorSystem()
	defer as.Shutdown()
	cfg := DefaultConfig()
	tree, done := spawnDoneRecorder(as)
	root := as.Root.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	deps := Deps{Events: nopEvents{}, Signals: nopSignals{}, Store: memStore{}, Epoch: 1}
	revived := revivedOp("op-1", 2)
	trees := []*opTree{{name: "default", pid: tree, ledger: newLedger("default", &cfg, 0, nil)}}
	o := newOperationActor(&cfg, deps, root, "op-1", revived.GetRequestId(), revived.GetSpec(), trees, cfg.Now(), revived, jobProgress{}, opShared{})
	pid := as.Root.Spawn(actor.PropsFromProducer(o))

	aborted := make(chan *pb.Error, 1)
	as.Root.Send(pid, &AbortOperation{ID: "op-1", Reply: func(_ *pb.AbortOperationResponse, e *pb.Error) { aborted <- e }})
	if e := await(t, aborted, "abort answer"); e != nil {
		t.Fatalf("abort: %v", e)
	}
	if id := await(t, done, "the abort's operationDone"); id != "op-1" {
		t.Fatalf("operationDone of %q", id)
	}
	// The tree's admission answer comes after.
	as.Root.Send(pid, &admitted{results: []*admitResult{{tree: "default", running: true}}})
	got := make(chan *pb.OperationStatus, 1)
	as.Root.Send(pid, &GetOperation{ID: "op-1", Reply: func(st *pb.OperationStatus, _ *pb.Error) { got <- st }})
	if st := await(t, got, "status"); st.GetState() != pb.OperationState_OPERATION_STATE_ABORTED {
		t.Fatalf("aborted before its admission's answer, the operation is %v", st.GetState())
	}
	// The tree that admitted it is told again that it is done.
	if id := await(t, done, "operationDone after the admission"); id != "op-1" {
		t.Fatalf("operationDone of %q", id)
	}
}
