package actors

import (
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// terminationParent spawns one child the way the root spawns an operation
// actor (named, inline dispatcher, not watched) and reports the
// *actor.Terminated it receives.
type terminationParent struct {
	child      chan *actor.PID
	terminated chan *actor.PID
}

func (p *terminationParent) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case string:
		pid, err := ctx.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}, inline), m)
		if err != nil {
			panic(err)
		}
		p.child <- pid
	case *actor.Terminated:
		p.terminated <- m.Who
	}
}

// The root does not watch the operation actors it spawns (see submit): it
// relies on protoactor telling a parent of its child's end, whether the
// child was poisoned (retire) or stopped (a refused admission), and on
// being told once.
func TestParentHearsOfChildEndWithoutWatching(t *testing.T) {
	as := actor.NewActorSystem()
	defer as.Shutdown()
	p := &terminationParent{child: make(chan *actor.PID, 1), terminated: make(chan *actor.PID, 4)}
	parent := as.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return p }))
	defer as.Root.Stop(parent)

	for _, end := range []struct {
		name string
		stop func(*actor.PID)
	}{
		{"op:poisoned", func(pid *actor.PID) { as.Root.Poison(pid) }},
		{"op:stopped", func(pid *actor.PID) { as.Root.Stop(pid) }},
	} {
		as.Root.Send(parent, end.name)
		child := await(t, p.child, "spawned child")
		end.stop(child)
		if got := await(t, p.terminated, "Terminated of "+end.name); got.GetId() != child.GetId() {
			t.Fatalf("%s: Terminated of %s, want %s", end.name, got.GetId(), child.GetId())
		}
		select {
		case extra := <-p.terminated:
			t.Fatalf("%s: a second Terminated (of %s)", end.name, extra.GetId())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
