package actors

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// aclSpec: research admits alice and bob; its child ml only alice; secret
// nobody; open has no list (anyone), nor has its child.
func aclSpec() TreeSpec {
	return TreeSpec{Name: "physical", Config: scheduler.DefaultTreeConfig(),
		Pools: []scheduler.PoolConfig{{Name: "research"}, {Name: "ml", Parent: "research"}, {Name: "deep", Parent: "ml"},
			{Name: "secret"}, {Name: "open"}, {Name: "open-child", Parent: "open"}, {Name: "shared"}},
		PoolOptions: map[scheduler.PoolID]PoolOptions{
			"research": {SubmitACL: []string{"alice", "bob"}},
			"ml":       {SubmitACL: []string{"alice"}},
			"secret":   {SubmitACL: []string{}},
			"shared":   {SubmitACL: []string{"*"}},
		}}
}

func TestSubmitACLTheNearestListDecides(t *testing.T) {
	spec := aclSpec()
	x := newACLIndex(&spec)
	got := map[string]string{}
	for _, pool := range []scheduler.PoolID{"research", "ml", "deep", "secret", "open", "open-child", "shared", ""} {
		for _, user := range []string{"alice", "bob", "anonymous"} {
			if e := x.deny("physical", pool, user, "spec.pool"); e != nil {
				if e.GetCode() != pb.ErrorCode_ERROR_CODE_PERMISSION_DENIED || e.GetField() != "spec.pool" {
					t.Errorf("%s in %s: %v", user, pool, e)
				}
				got[string(pool)] += user + " "
			}
		}
	}
	want := map[string]string{
		"research": "anonymous ",
		"ml":       "bob anonymous ",
		"deep":     "bob anonymous ", // ml's list, the nearest
		"secret":   "alice bob anonymous ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("denied (-want +got):\n%s", diff)
	}
	if e := x.deny("physical", "deep", "bob", "spec.pool"); !strings.Contains(e.GetMessage(), `(by the submit_acl of its ancestor ml): the list admits alice`) {
		t.Errorf("message %q does not name the list that decided", e.GetMessage())
	}
	if newACLIndex(&TreeSpec{Pools: spec.Pools}) != nil {
		t.Error("a tree without lists has an index")
	}
}

// Through the actors: submissions are admitted or refused by the pool's
// list, a revived operation is not checked, and an update may not move an
// operation into a pool its user may not use.
func TestSubmitACLAtSubmissionAndMove(t *testing.T) {
	deps := Deps{Events: nopEvents{}, Signals: nopSignals{}, Store: memStore{}, Epoch: 2}
	revived := revivedOp("op-0-1", 1)
	revived.Spec.User, revived.Spec.Pool = "bob", "secret" // admitted before secret got its list
	sys, err := Start(DefaultConfig(), deps, []TreeSpec{aclSpec()}, "physical", []*pb.OperationStatus{revived})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sys.Stop)
	submit := func(user, pool string) (string, *pb.Error) {
		answers := make(chan *pb.StartOperationResponse, 1)
		errs := make(chan *pb.Error, 1)
		spec := &pb.OperationSpec{User: user, Pool: pool, Tasks: []*pb.TaskSpec{{Name: "t", JobCount: 1, JobResources: &pb.Resources{Cpu: 1},
			Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(time.Hour)}}}}
		sys.Submit(&SubmitOperation{Spec: spec, Reply: func(r *pb.StartOperationResponse, e *pb.Error) { answers <- r; errs <- e }})
		r := await(t, answers, "submit answer")
		return r.GetOperationId(), <-errs
	}
	id, e := submit("alice", "deep")
	if e != nil {
		t.Fatalf("alice into deep: %v", e)
	}
	if _, e := submit("bob", "deep"); e.GetCode() != pb.ErrorCode_ERROR_CODE_PERMISSION_DENIED || e.GetField() != "spec.pool" {
		t.Fatalf("bob into deep: %v, want PERMISSION_DENIED on spec.pool", e)
	}
	if _, e := submit("bob", "open-child"); e != nil {
		t.Fatalf("bob into open-child: %v", e)
	}
	// The revived operation runs in secret although nobody may submit there.
	st := make(chan *pb.OperationStatus, 1)
	sys.Get(&GetOperation{ID: "op-0-1", Reply: func(s *pb.OperationStatus, _ *pb.Error) { st <- s }})
	if s := await(t, st, "revived status"); s.GetState() == pb.OperationState_OPERATION_STATE_FAILED {
		t.Fatalf("the revived operation in secret failed: %v", s)
	}
	// alice's operation may not move into secret.
	upd := make(chan *pb.Error, 1)
	sys.Update(&UpdateOperation{ID: id, Req: &pb.UpdateOperationRequest{OperationId: id, Pool: "secret"},
		Reply: func(_ *pb.UpdateOperationResponse, e *pb.Error) { upd <- e }})
	if e := await(t, upd, "update answer"); e.GetCode() != pb.ErrorCode_ERROR_CODE_PERMISSION_DENIED || !strings.Contains(e.GetMessage(), `user "alice" may not submit into pool "secret"`) {
		t.Fatalf("moving alice's operation into secret: %v, want PERMISSION_DENIED", e)
	}
}
