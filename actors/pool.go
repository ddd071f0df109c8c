package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// poolActor reports one pool's starvation changes as events. The tree
// actor tells it of each change (poolResult), with the status before.
type poolActor struct {
	tree string
	name scheduler.PoolID
	deps Deps
}

func newPoolActor(tree string, name scheduler.PoolID, deps Deps) actor.Producer {
	return func() actor.Actor { return &poolActor{tree: tree, name: name, deps: deps} }
}

func (p *poolActor) Receive(ctx actor.Context) {
	m, ok := ctx.Message().(*poolResult)
	if !ok {
		return
	}
	prev, e := m.from, &m.elem
	if e.StarvationStatus == prev {
		return
	}
	ev := &pb.StarvationEvent{
		Pool: string(p.name), From: prev.String(), To: e.StarvationStatus.String(),
		FairShare: e.FairShare.Total.MaxComponent(), UsageShare: e.UsageShare.MaxComponent(),
	}
	if !e.BelowFairShareSince.IsZero() {
		ev.BelowFairShareSince = timestamppb.New(e.BelowFairShareSince)
	}
	p.deps.Events.Publish(p.tree, subjects.EventStarvation, &pb.Event{
		Time: timestamppb.New(time.Unix(0, m.now)), Tree: p.tree,
		Kind: &pb.Event_Starvation{Starvation: ev},
	})
}
