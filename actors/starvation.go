package actors

import (
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// opStarv is an operation's last starvation status.
type opStarv struct {
	status scheduler.StarvationStatus
	seen   int
}

// operationStarvation publishes an event for every operation whose
// starvation status changed in this update (pools' changes are their pool
// actors'), and forgets operations the update no longer has.
func (t *treeActor) operationStarvation(res *scheduler.Result) {
	if t.opStarvation == nil {
		t.opStarvation = map[string]opStarv{}
	}
	for i := range res.Elements {
		e := &res.Elements[i]
		if e.Kind != scheduler.KindOperation {
			continue
		}
		prev, known := t.opStarvation[e.Name]
		t.opStarvation[e.Name] = opStarv{status: e.StarvationStatus, seen: t.updates}
		if e.StarvationStatus == prev.status || !known && e.StarvationStatus == scheduler.NonStarving {
			continue
		}
		ev := &pb.StarvationEvent{
			Pool: e.Parent, OperationId: e.Name, From: prev.status.String(), To: e.StarvationStatus.String(),
			FairShare: e.FairShare.Total.MaxComponent(), UsageShare: e.UsageShare.MaxComponent(),
		}
		if !e.BelowFairShareSince.IsZero() {
			ev.BelowFairShareSince = timestamppb.New(e.BelowFairShareSince)
		}
		t.deps.Events.Publish(t.spec.Name, subjects.EventStarvation, &pb.Event{
			Time: timestamppb.New(res.Now), Tree: t.spec.Name, Kind: &pb.Event_Starvation{Starvation: ev},
		})
	}
	for id, s := range t.opStarvation {
		if s.seen != t.updates {
			delete(t.opStarvation, id)
		}
	}
}
