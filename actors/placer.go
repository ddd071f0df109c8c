package actors

import "github.com/asynkron/protoactor-go/actor"

// placerActor runs the ledger work of every heartbeat of one tree, one after
// another. Node actors ask it instead of taking the ledger's mutex
// themselves: with thousands of node actors contending, the mutex went into
// starvation mode and every hand-over waited for the next owner to be
// scheduled (a lock convoy); one owner that drains its mailbox has no
// hand-overs, and the mutex is left to the rare other users (the tree
// actor's snapshot and result, admissions).
type placerActor struct {
	ledger *Ledger
}

func newPlacerActor(ledger *Ledger) actor.Producer {
	return func() actor.Actor { return &placerActor{ledger: ledger} }
}

func (p *placerActor) Receive(ctx actor.Context) {
	if m, ok := ctx.Message().(*passRequest); ok {
		ctx.Respond(p.ledger.pass(m))
	}
}
