package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/sharetree/sharetree/scheduler"
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
	publishStarvation(p.deps.Events, p.tree, string(p.name), "", e, prev, time.Unix(0, m.now))
}
