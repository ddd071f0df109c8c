package actors

import (
	"fmt"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

// pendingTree is a tree actor with only what refreshPending and tellQueue
// read: the admission and the operations (each with a PID named after it,
// so that a recorded message says whom it was for).
type pendingTree struct {
	t *treeActor
}

func newPendingTree(tb testing.TB, cfg scheduler.TreeConfig, pools []scheduler.PoolConfig) *pendingTree {
	tb.Helper()
	adm, err := scheduler.NewAdmission(cfg, pools)
	if err != nil {
		tb.Fatalf("NewAdmission: %v", err)
	}
	return &pendingTree{t: &treeActor{spec: TreeSpec{Name: "physical", Config: cfg, Pools: pools}, adm: adm,
		ops: map[scheduler.OperationID]*treeOp{}}}
}

// admit admits an operation as the tree actor does: running, or pending
// and told its reason.
func (p *pendingTree) admit(tb testing.TB, id scheduler.OperationID, pool scheduler.PoolID) {
	tb.Helper()
	st, err := p.t.adm.Add(id, pool)
	if err != nil {
		tb.Fatalf("Add %s: %v", id, err)
	}
	op := &treeOp{msg: &admitOperation{id: id, pool: pool, op: actor.NewPID("test", string(id))}, pool: pool}
	p.t.ops[id] = op
	if st == scheduler.AdmissionRunning {
		op.running = true
		return
	}
	p.t.tellQueue(op, id)
}

// end removes an operation as the tree actor does (the promoted ones run)
// and returns what refreshPending told the waiting ones.
func (p *pendingTree) end(tb testing.TB, id scheduler.OperationID) []string {
	tb.Helper()
	promoted, err := p.t.adm.Remove(id)
	if err != nil {
		tb.Fatalf("Remove %s: %v", id, err)
	}
	delete(p.t.ops, id)
	for _, id := range promoted {
		op := p.t.ops[id]
		op.running, op.lastQueue, op.queued = true, nil, queueSpot{}
	}
	return p.refresh()
}

func (p *pendingTree) refresh() []string {
	var told []string
	p.t.refreshPending(func(pid *actor.PID, msg any) {
		m := msg.(*operationPending)
		told = append(told, pid.Id+": "+m.reason.GetMessage())
	})
	return told
}

// After an operation ends, the operations still waiting are told their new
// place when it changed, and only then; the reason names the queue's pool,
// its running count and limit, and the position.
func TestRefreshPendingTellsChangedPlacesOnly(t *testing.T) {
	cfg := scheduler.DefaultTreeConfig()
	one := 1
	two := 2
	p := newPendingTree(t, cfg, []scheduler.PoolConfig{
		{Name: "q", MaxRunningOperationCount: &one},
		{Name: "r", MaxRunningOperationCount: &two},
	})
	for _, op := range []struct {
		id   scheduler.OperationID
		pool scheduler.PoolID
	}{{"q0", "q"}, {"q1", "q"}, {"q2", "q"}, {"q3", "q"}, {"r0", "r"}, {"r1", "r"}, {"r2", "r"}} {
		p.admit(t, op.id, op.pool)
	}
	reason := func(pool string, running, limit, pos int) string {
		return fmt.Sprintf("tree physical: max_running_operation_count of %s reached (%d/%d); position %d in the queue of %s", pool, running, limit, pos, pool)
	}
	if got, want := p.t.ops["q3"].lastQueue.GetMessage(), reason("q", 1, 1, 2); got != want {
		t.Errorf("q3 admitted with %q, want %q", got, want)
	}
	steps := []struct {
		end  scheduler.OperationID
		want []string
	}{
		// q1 runs; q2 and q3 move up; r's queue did not change.
		{"q0", []string{"q2: " + reason("q", 1, 1, 0), "q3: " + reason("q", 1, 1, 1)}},
		// A waiting operation leaves: the one behind it moves up.
		{"q2", []string{"q3: " + reason("q", 1, 1, 0)}},
		// r2 runs: nobody waits in r any more, q is unchanged.
		{"r0", nil},
		{"q1", nil}, // q3 runs
	}
	for _, s := range steps {
		if diff := cmp.Diff(s.want, p.end(t, s.end)); diff != "" {
			t.Errorf("after %s ends (-want +told):\n%s", s.end, diff)
		}
		if again := p.refresh(); len(again) != 0 {
			t.Errorf("after %s ends, a second refresh told %v, want nothing (nothing changed)", s.end, again)
		}
	}
	for id, op := range p.t.ops {
		if !op.running || op.lastQueue != nil {
			t.Errorf("%s: running %v, last reason %v; want running with no reason", id, op.running, op.lastQueue)
		}
	}
}

// BenchmarkRefreshPending is one operation's end in a tree where 10,000
// operations wait: in one queue (every one of them moves up and is told
// so) or spread over 100 pools' queues (only the ended operation's queue
// moves).
func BenchmarkRefreshPending(b *testing.B) {
	for _, queues := range []int{1, 100} {
		b.Run(fmt.Sprintf("pending=10000,queues=%d", queues), func(b *testing.B) {
			cfg := scheduler.DefaultTreeConfig()
			cfg.MaxOperationCount = 1 << 30
			one, unlimited := 1, 1<<30
			pools := make([]scheduler.PoolConfig, queues)
			for i := range pools {
				pools[i] = scheduler.PoolConfig{Name: scheduler.PoolID(fmt.Sprintf("p%03d", i)), MaxRunningOperationCount: &one, MaxOperationCount: &unlimited}
			}
			p := newPendingTree(b, cfg, pools)
			next := 0
			admit := func(pool int) scheduler.OperationID {
				id := scheduler.OperationID(fmt.Sprintf("op%07d", next))
				next++
				p.admit(b, id, pools[pool].Name)
				return id
			}
			running := make([]scheduler.OperationID, queues)
			for i := range 10000 + queues {
				if id := admit(i % queues); i < queues {
					running[i] = id
				}
			}
			p.refresh()
			b.ResetTimer()
			for i := range b.N {
				pool := i % queues
				// The pool's running operation ends; the head of its queue
				// runs, and a new operation joins the queue's end (outside
				// the count: refreshPending is what is measured).
				promoted, err := p.t.adm.Remove(running[pool])
				if err != nil || len(promoted) != 1 {
					b.Fatalf("Remove: %v, promoted %v", err, promoted)
				}
				delete(p.t.ops, running[pool])
				running[pool] = promoted[0]
				p.t.ops[promoted[0]].running = true
				p.t.refreshPending(func(*actor.PID, any) {})
				b.StopTimer()
				admit(pool)
				b.StartTimer()
			}
		})
	}
}
