package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// publishStarvation publishes a starvation event: element e (of pool, and
// operation op unless "") went from from to its status in the update of
// now.
func publishStarvation(events EventSink, tree, pool, op string, e *scheduler.ElementResult, from scheduler.StarvationStatus, now time.Time) {
	ev := &pb.StarvationEvent{
		Pool: pool, OperationId: op, From: from.String(), To: e.StarvationStatus.String(),
		FairShare: e.FairShare.Total.MaxComponent(), UsageShare: e.UsageShare.MaxComponent(),
	}
	if !e.BelowFairShareSince.IsZero() {
		ev.BelowFairShareSince = timestamppb.New(e.BelowFairShareSince)
	}
	events.Publish(tree, subjects.EventStarvation, &pb.Event{
		Time: timestamppb.New(now), Tree: tree, Kind: &pb.Event_Starvation{Starvation: ev},
	})
}

// opStarv is an operation's last starvation status other than
// non-starving, and the update that saw it.
type opStarv struct {
	status scheduler.StarvationStatus
	seen   int
}

// operationStarvation publishes an event for every operation whose
// starvation status changed in this update (pools' changes are their pool
// actors'), in element order. Only starving operations are remembered: an
// operation the map does not hold was non-starving (or unknown), so an
// update of a tree of mostly satisfied operations writes a few entries,
// not one per operation. A remembered operation that is non-starving now
// is forgotten; one the update no longer has is forgotten too.
func (t *treeActor) operationStarvation(res *scheduler.Result) {
	if t.opStarvation == nil {
		t.opStarvation = map[string]opStarv{}
	}
	publish := func(e *scheduler.ElementResult, from scheduler.StarvationStatus) {
		publishStarvation(t.deps.Events, t.spec.Name, e.Parent, e.Name, e, from, res.Now)
	}
	for i := range res.Elements {
		e := &res.Elements[i]
		if e.Kind != scheduler.KindOperation {
			continue
		}
		if e.StarvationStatus == scheduler.NonStarving {
			// A lookup only while some operation is remembered (a small
			// map: the starving ones).
			if len(t.opStarvation) > 0 {
				if prev, known := t.opStarvation[e.Name]; known {
					delete(t.opStarvation, e.Name)
					publish(e, prev.status)
				}
			}
			continue
		}
		prev, known := t.opStarvation[e.Name]
		t.opStarvation[e.Name] = opStarv{status: e.StarvationStatus, seen: t.updates}
		if !known {
			prev.status = scheduler.NonStarving
		}
		if e.StarvationStatus != prev.status {
			publish(e, prev.status)
		}
	}
	// The ones left unseen are gone.
	for id, s := range t.opStarvation {
		if s.seen != t.updates {
			delete(t.opStarvation, id)
		}
	}
}

// poolStarvation sends each pool actor whose pool's starvation status
// changed in this update its record, with the status before. A pool
// actor hears of nothing else: 10,000 pools are 10,000 messages an update
// otherwise.
func (t *treeActor) poolStarvation(res *scheduler.Result, send func(*actor.PID, *poolResult)) {
	for i := range res.Elements {
		e := &res.Elements[i]
		if e.Kind != scheduler.KindPool {
			continue
		}
		name := scheduler.PoolID(e.Name)
		from := t.poolStarving[name] // NonStarving when absent
		if e.StarvationStatus == from {
			continue
		}
		if pid := t.pools[name]; pid != nil {
			send(pid, newPoolResult(e, from, res.Now))
			if e.StarvationStatus == scheduler.NonStarving {
				delete(t.poolStarving, name)
			} else {
				t.poolStarving[name] = e.StarvationStatus
			}
		}
	}
}
