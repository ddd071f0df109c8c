package actors

import (
	"fmt"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

// operationStarvation publishes one event per operation whose starvation
// status changed, in element order, from the status of the last update
// that had the operation (non-starving for one it never saw); an
// operation that leaves the tree publishes nothing, and one that comes
// back starts from non-starving again.
func TestOperationStarvationEvents(t *testing.T) {
	ev := &recordedEvents{}
	ta := &treeActor{spec: TreeSpec{Name: "physical"}, deps: Deps{Events: ev}}
	const (
		non  = scheduler.NonStarving
		st   = scheduler.Starving
		aggr = scheduler.AggressivelyStarving
	)
	type op struct {
		id     string
		status scheduler.StarvationStatus
	}
	updates := [][]op{
		{{"a", st}, {"b", non}, {"c", aggr}},
		{{"a", non}, {"c", st}, {"d", st}},               // b gone
		{{"d", st}, {"b", st}},                           // a and c gone; b back
		{{"a", st}, {"b", non}, {"c", non}, {"d", aggr}}, // a back
	}
	var got []string
	for u, ops := range updates {
		res := &scheduler.Result{Now: time.Unix(int64(u), 0)}
		res.Elements = append(res.Elements, scheduler.ElementResult{Kind: scheduler.KindRoot, Name: scheduler.RootID},
			scheduler.ElementResult{Kind: scheduler.KindPool, Name: "p", Parent: scheduler.RootID, StarvationStatus: aggr})
		for _, o := range ops {
			res.Elements = append(res.Elements, scheduler.ElementResult{Kind: scheduler.KindOperation, Name: o.id, Parent: "p", StarvationStatus: o.status})
		}
		ev.evs = nil
		ta.updates++
		ta.operationStarvation(res)
		for _, e := range ev.evs {
			s := e.ev.GetStarvation()
			got = append(got, fmt.Sprintf("update %d: %s %s → %s", u, s.GetOperationId(), s.GetFrom(), s.GetTo()))
		}
	}
	want := []string{
		"update 0: a non_starving → starving",
		"update 0: c non_starving → aggressively_starving",
		"update 1: a starving → non_starving",
		"update 1: c aggressively_starving → starving",
		"update 1: d non_starving → starving",
		"update 2: b non_starving → starving",
		"update 3: a non_starving → starving",
		"update 3: b starving → non_starving",
		"update 3: d starving → aggressively_starving",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if len(ta.opStarvation) != 2 {
		t.Errorf("remembers %d operations, want the 2 starving ones (a, d): %v", len(ta.opStarvation), ta.opStarvation)
	}
}

// poolStarvation tells a pool actor of its pool's starvation changes only,
// each with the status before; a pool without an actor is skipped, and the
// status its actor was last told stays (syncPoolActors forgets it when it
// stops the actor).
func TestPoolStarvationSendsChangesOnly(t *testing.T) {
	const (
		non  = scheduler.NonStarving
		st   = scheduler.Starving
		aggr = scheduler.AggressivelyStarving
	)
	pids := map[scheduler.PoolID]*actor.PID{"a": actor.NewPID("local", "a"), "b": actor.NewPID("local", "b")}
	ta := &treeActor{pools: map[scheduler.PoolID]*actor.PID{}, poolStarving: map[scheduler.PoolID]scheduler.StarvationStatus{}}
	type pool struct {
		name   scheduler.PoolID
		status scheduler.StarvationStatus
	}
	updates := []struct {
		actors []scheduler.PoolID // pools with an actor at this update
		pools  []pool
	}{
		{[]scheduler.PoolID{"a", "b"}, []pool{{"a", st}, {"b", non}}},
		{[]scheduler.PoolID{"a", "b"}, []pool{{"a", st}, {"b", non}}}, // nothing changed
		{[]scheduler.PoolID{"a", "b"}, []pool{{"a", aggr}, {"b", st}}},
		{[]scheduler.PoolID{"b"}, []pool{{"a", non}, {"b", non}}}, // a has no actor
		{[]scheduler.PoolID{"a", "b"}, []pool{{"a", st}, {"b", non}}},
	}
	var got []string
	for u, up := range updates {
		clear(ta.pools)
		for _, name := range up.actors {
			ta.pools[name] = pids[name]
		}
		res := &scheduler.Result{Now: time.Unix(int64(u), 0)}
		res.Elements = append(res.Elements, scheduler.ElementResult{Kind: scheduler.KindRoot, Name: scheduler.RootID, StarvationStatus: aggr})
		for _, p := range up.pools {
			res.Elements = append(res.Elements, scheduler.ElementResult{Kind: scheduler.KindPool, Name: string(p.name), Parent: scheduler.RootID, StarvationStatus: p.status},
				scheduler.ElementResult{Kind: scheduler.KindOperation, Name: "op-" + string(p.name), Parent: string(p.name), StarvationStatus: aggr})
		}
		ta.poolStarvation(res, func(pid *actor.PID, m *poolResult) {
			got = append(got, fmt.Sprintf("update %d: %s %s → %s at %d", u, pid.Id, m.from, m.elem.StarvationStatus, m.now/1e9))
		})
	}
	want := []string{
		"update 0: a non_starving → starving at 0",
		"update 2: a starving → aggressively_starving at 2",
		"update 2: b non_starving → starving at 2",
		"update 3: b starving → non_starving at 3",
		"update 4: a aggressively_starving → starving at 4",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}
