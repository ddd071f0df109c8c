package actors

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// gatedFairShareEvents holds the first fair-share event published once
// armed (and with it the tree actor publishing it) until released.
type gatedFairShareEvents struct {
	entered, release chan struct{}
	armed, once      atomic.Bool
	releaseOnce      sync.Once
}

// open releases the held event (once; later calls do nothing).
func (g *gatedFairShareEvents) open() { g.releaseOnce.Do(func() { close(g.release) }) }

// startGated starts a system of one tree whose fair-share events are
// gated; the gate opens before the system stops at the end of the test.
func startGated(t *testing.T, cfg Config, armed bool) (*System, *gatedFairShareEvents) {
	t.Helper()
	events := newGatedFairShareEvents(armed)
	deps := Deps{Events: events, Signals: nopSignals{}, Store: memStore{}, Epoch: 2}
	sys, err := Start(cfg, deps, []TreeSpec{{Name: "physical", Config: scheduler.DefaultTreeConfig()}}, "physical", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sys.Stop)
	t.Cleanup(events.open) // runs first: a held tree actor would hold up Stop
	return sys, events
}

// openAndIntrospect opens the gate of a tree held by startGated and
// returns tree "physical"'s introspection once the tree answers again.
func openAndIntrospect(t *testing.T, sys *System, events *gatedFairShareEvents, scope Scope) *TreeIntrospection {
	t.Helper()
	events.open()
	var snap *TreeIntrospection
	testutil.WaitFor(t, 10*time.Second, "the tree to answer again", func() bool {
		var err error
		snap, err = sys.Introspect("physical", scope)
		return err == nil
	})
	return snap
}

func newGatedFairShareEvents(armed bool) *gatedFairShareEvents {
	g := &gatedFairShareEvents{entered: make(chan struct{}), release: make(chan struct{})}
	g.armed.Store(armed)
	return g
}

func (g *gatedFairShareEvents) Publish(_ string, kind subjects.EventKind, _ *pb.Event) {
	if kind == subjects.EventFairShare && g.armed.Load() && g.once.CompareAndSwap(false, true) {
		close(g.entered)
		<-g.release
	}
}

// A submission whose tree does not answer its admission within
// RequestTimeout is refused; the tree that admits it late forgets it. It
// used to keep it: an operation nobody tracks (its actor is stopped) held
// a running slot of its pool and had its jobs scheduled.
func TestAdmissionGivenUpIsUndoneInTheLateTree(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RequestTimeout = 100 * time.Millisecond
	sys, events := startGated(t, cfg, true)
	await(t, events.entered, "the tree's first fair-share event")

	answers := make(chan *pb.Error, 1)
	sys.Submit(&SubmitOperation{Spec: revivedOp("", 1).GetSpec(), Reply: func(_ *pb.StartOperationResponse, e *pb.Error) { answers <- e }})
	if e := await(t, answers, "submit answer"); e.GetCode() != pb.ErrorCode_ERROR_CODE_UNAVAILABLE {
		t.Fatalf("submit answer %v; want UNAVAILABLE (the tree does not answer)", e)
	}
	snap := openAndIntrospect(t, sys, events, Scope{AllOperations: true})
	if len(snap.Operations) != 0 {
		t.Fatalf("the tree keeps the refused operation %s (pool %s)", snap.Operations[0].ID, snap.Operations[0].Pool)
	}
}
