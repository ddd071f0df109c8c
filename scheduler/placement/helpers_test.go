package placement

import (
	"testing"

	"github.com/sharetree/sharetree/scheduler"
)

// res builds a vector of slots, cpu and memory.
func res(slots, cpu, mem float64) scheduler.Resources {
	return scheduler.Resources{scheduler.UserSlots: slots, scheduler.CPU: cpu, scheduler.Memory: mem}
}

// uniform is a share of v in every resource.
func uniform(v float64) scheduler.Share {
	return scheduler.Share{v, v, v, v, v}
}

// limits builds limits with only the given resources set.
func limits(kv map[scheduler.ResourceType]float64) scheduler.PartialResources {
	var l scheduler.PartialResources
	for r := range scheduler.NumResources {
		if v, ok := kv[scheduler.ResourceType(r)]; ok {
			l = l.With(scheduler.ResourceType(r), v)
		}
	}
	return l
}

// op is a one-task operation spec.
func op(id, pool string, order uint64, jobs int, job scheduler.Resources) OperationSpec {
	return OperationSpec{ID: scheduler.OperationID(id), Pool: scheduler.PoolID(pool), Order: order,
		Tasks: []TaskSpec{{Name: "t", JobCount: jobs, JobResources: job}}}
}

// fairResult builds a Result with the given fair shares: pools by name,
// operations by id (kinds told apart by the ops set).
func fairResult(pools, ops map[string]scheduler.Share) *scheduler.Result {
	r := &scheduler.Result{Elements: []scheduler.ElementResult{{Kind: scheduler.KindRoot, Name: scheduler.RootID, FairShare: scheduler.DetailedShare{Total: uniform(1)}}}}
	for _, name := range sortedKeys(pools) {
		r.Elements = append(r.Elements, scheduler.ElementResult{Kind: scheduler.KindPool, Name: name, FairShare: scheduler.DetailedShare{Total: pools[name]}})
	}
	for _, name := range sortedKeys(ops) {
		r.Elements = append(r.Elements, scheduler.ElementResult{Kind: scheduler.KindOperation, Name: name, FairShare: scheduler.DetailedShare{Total: ops[name]}})
	}
	return r
}

func sortedKeys(m map[string]scheduler.Share) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// mustBuild makes a Placement with the pools and operations, failing the
// test on any error.
func mustBuild(t testing.TB, total scheduler.Resources, pools []PoolSpec, ops ...OperationSpec) *Placement {
	t.Helper()
	p := New()
	p.SetTotal(total)
	if err := p.SetPools(pools); err != nil {
		t.Fatal(err)
	}
	for _, o := range ops {
		if err := p.AddOperation(o); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// adopt adopts jobs 0..n-1 of task 0 of id on node "n0".
func adopt(t testing.TB, p *Placement, id string, n int) {
	t.Helper()
	for i := range n {
		if !p.Adopt(JobKey{Operation: scheduler.OperationID(id), Index: i}, "n0") {
			t.Fatalf("adopt %s/%d refused", id, i)
		}
	}
}

// opsOf lists the operation ids of assignments.
func opsOf(as []Assignment) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, string(a.Job.Operation))
	}
	return out
}
