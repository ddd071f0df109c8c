package actors

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// TestResultsRecycleOnlySupersededUnreadResults walks the recycling rules
// step by step: a Result is handed out again only once it is superseded,
// every lease on it is released and it was never pinned.
func TestResultsRecycleOnlySupersededUnreadResults(t *testing.T) {
	var r results
	named := map[*scheduler.Result]string{}
	name := func(res *scheduler.Result) string {
		if n, ok := named[res]; ok {
			return n
		}
		n := fmt.Sprintf("r%d", len(named))
		named[res] = n
		return n
	}
	take := func() *scheduler.Result {
		res := r.take()
		name(res)
		return res
	}
	var got []string
	step := func(what string, res *scheduler.Result) { got = append(got, what+" "+name(res)) }

	a := take()
	step("first take is new:", a)
	r.publish(a)
	b := take()
	step("the latest is not handed out:", b)
	r.publish(b) // a is superseded and unread
	c := take()
	step("the superseded one is:", c)

	// A lease keeps a superseded Result from being recycled until it is
	// released; releasing twice counts once.
	r.publish(c)
	leased, release := r.acquire()
	step("acquire returns the latest:", leased)
	_, other := r.acquire()
	d := take()
	step("b was recycled by c's publish:", d)
	r.publish(d) // c is superseded but read twice
	e := take()
	step("c is read, so a new one:", e)
	release()
	release()
	f := take()
	step("one lease still holds c:", f)
	other()
	g := take()
	step("the last release recycles c:", g)

	// A pinned Result is never recycled; a given-back one is.
	r.publish(g)
	step("pin returns the latest:", r.pin())
	h := take()
	step("d was recycled by g's publish:", h)
	r.publish(h)
	x := take()
	step("the pinned one is not handed out:", x)
	r.giveBack(x)
	step("a given-back Result is handed out again:", take())

	want := []string{
		"first take is new: r0",
		"the latest is not handed out: r1",
		"the superseded one is: r0",
		"acquire returns the latest: r0",
		"b was recycled by c's publish: r1",
		"c is read, so a new one: r2",
		"one lease still holds c: r3",
		"the last release recycles c: r0",
		"pin returns the latest: r0",
		"d was recycled by g's publish: r1",
		"the pinned one is not handed out: r4",
		"a given-back Result is handed out again: r4",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if rec, alloc := r.counts(); rec != 5 || alloc != 5 {
		t.Errorf("counts: recycled %d, allocated %d; want 5 and 5", rec, alloc)
	}
}

// TestTreeRecyclesResultsWhileReadersRead runs a tree that updates every
// 10 milliseconds while readers on other goroutines hold its latest Result
// through introspection leases across several updates, and read operation
// statuses (which lease it too). The tree must recycle Results (the test
// waits until it has, many times), and no reader may see its Result change
// while it holds it: each reader takes a signature of every record when it
// gets the Result and again after two more updates. Under the race
// detector (.ci/run) a write under a reader is also reported.
func TestTreeRecyclesResultsWhileReadersRead(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg := DefaultConfig()
	cfg.Now, cfg.RequestTimeout = clock.Now, 5*time.Second
	tc := scheduler.DefaultTreeConfig()
	tc.FairShareUpdatePeriod = 10 * time.Millisecond
	tree := TreeSpec{Name: "physical", Config: tc, Pools: []scheduler.PoolConfig{
		{Name: "a", StrongGuaranteeResources: scheduler.PartialResources{}.With(scheduler.CPU, 2)},
		{Name: "b", Mode: scheduler.ModeFIFO},
		{Name: "c", Parent: "a"},
	}}
	sys, err := Start(cfg, Deps{Events: nopEvents{}, Signals: nopSignals{}, Store: memStore{}, Epoch: 1}, []TreeSpec{tree}, "physical", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sys.Stop)
	h := &preemptHarness{t: t, sys: sys, clock: clock, seq: map[string]uint64{}}
	var ids []string
	for i, pool := range []string{"a", "b", "c", "b", "c", "a"} {
		ids = append(ids, h.submit(pool, int32(2+i), 1))
	}
	h.beat("n1", 8, nil, nil)

	ledger := sys.dir.Load().trees[0].ledger
	takes := func() uint64 {
		rec, alloc := ledger.results.counts()
		return rec + alloc
	}
	var (
		wg      sync.WaitGroup
		stop    = make(chan struct{})
		mu      sync.Mutex
		held    int // Results held across two updates and unchanged
		changed []string
	)
	read := func(reader int) {
		defer wg.Done()
		for k := 0; ; k++ {
			select {
			case <-stop:
				return
			default:
			}
			in, err := sys.Introspect("physical", Scope{AllOperations: true})
			if err != nil {
				t.Errorf("reader %d: %v", reader, err)
				return
			}
			if in.Result != nil {
				before, from := resultSignature(in.Result), takes()
				twoMore := testutil.Poll(10*time.Second, func() bool { return takes() >= from+2 })
				after := resultSignature(in.Result)
				mu.Lock()
				if before != after {
					changed = append(changed, fmt.Sprintf("reader %d: %s became %s", reader, before, after))
				} else if twoMore {
					held++
				}
				mu.Unlock()
			}
			in.Release()
			// Operation statuses read the Result under a lease too.
			got := make(chan *pb.Error, 1)
			sys.Get(&GetOperation{ID: ids[k%len(ids)], Reply: func(_ *pb.OperationStatus, e *pb.Error) { got <- e }})
			if e := await(t, got, "operation status"); e != nil {
				t.Errorf("reader %d: status: %v", reader, e)
				return
			}
		}
	}
	for i := range 3 {
		wg.Add(1)
		go read(i)
	}
	// The clock moves so that each update's time differs from the last.
	testutil.WaitFor(t, 30*time.Second, "the tree to recycle Results while readers hold others", func() bool {
		clock.advance(time.Millisecond)
		rec, _ := ledger.results.counts()
		mu.Lock()
		defer mu.Unlock()
		return rec >= 30 && held >= 30
	})
	close(stop)
	wg.Wait()
	if len(changed) > 0 {
		t.Errorf("%d Results changed under their readers; the first: %s", len(changed), changed[0])
	}
	rec, alloc := ledger.results.counts()
	t.Logf("recycled %d Results, allocated %d; %d held across two updates", rec, alloc, held)
}

// resultSignature sums every record of a Result (and their job
// classifications and integral attributes) into a string.
func resultSignature(res *scheduler.Result) string {
	var sum float64
	var names, jobs int
	for i := range res.Elements {
		e := &res.Elements[i]
		sum += e.FairShare.Total.MaxComponent() + e.UsageShare.MaxComponent() + e.DemandShare.MaxComponent()
		names += len(e.Name) + len(e.Parent)
		jobs += len(e.Jobs)
		if e.Integral != nil {
			sum += e.Integral.AccumulatedResourceRatioVolume
		}
	}
	return fmt.Sprintf("update at %s, %d records, sum %g, names %d, jobs %d", res.Now.Format(time.RFC3339Nano), len(res.Elements), sum, names, jobs)
}
