package preemption

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
)

// OperationSettings are an operation's preemption settings from its spec.
type OperationSettings struct {
	// Mode is the spec's preemption_mode.
	Mode Mode
	// NonPreemptibleResourceUsageThreshold is the spec's own setting (it can
	// only lower the inherited one); nil when unset.
	NonPreemptibleResourceUsageThreshold *scheduler.PartialResources
}

// NodeJob is a job the node actor believes runs on its node.
type NodeJob struct {
	ID  JobID
	Key placement.JobKey
	// Resources is what the job holds on the node.
	Resources scheduler.Resources
	// Leaving is set when the node actor already wants the job gone (an
	// abort or interruption is pending); jobs in Source.Interrupting and
	// jobs the placement does not know as running are leaving too.
	Leaving bool
}

// Source is what the adapter reads to build a view. Every field is read
// only; the caller must hold whatever lock guards Placement for the
// duration of the call.
type Source struct {
	// Settings come from the tree's configuration (NewTreeSettings).
	Settings *TreeSettings
	// Result is the latest fair-share update: fair shares, demand shares,
	// strong-guarantee shares and starvation statuses.
	Result *scheduler.Result
	// Placement is the live state: usage, pending jobs, running jobs in
	// start order.
	Placement *placement.Placement
	// Operation returns an operation's settings; nil means every operation
	// is normal and has no threshold of its own.
	Operation func(scheduler.OperationID) OperationSettings
	// Interrupting holds every running job of the tree, on any node, that
	// is being interrupted or aborted and has not left yet, with its
	// resources. Their usage is left out of operations' and pools' usage
	// and out of the classification.
	Interrupting map[placement.JobKey]scheduler.Resources
	// Leaving is SumLeaving(Interrupting), or nil. A view needs the
	// interrupting jobs' resources per operation: without Leaving it sums
	// them from Interrupting, every interrupting job of the tree, in key
	// order (O(|Interrupting| log |Interrupting|) per view); a caller that
	// builds many views between changes of Interrupting keeps one and
	// sums again only after a change.
	Leaving *Leaving
	// Starving lists the operations of Result whose starvation status is
	// not NonStarving: StarvingOperations(Result), computed once per result
	// by the caller. PreemptionView considers no other starving operations
	// (nil: none).
	Starving []scheduler.OperationID
	// MaxStarts and GracefulTolerance are copied into the views.
	MaxStarts         int
	GracefulTolerance float64
}

func (s *Source) check() error {
	switch {
	case s.Settings == nil:
		return fmt.Errorf("%w: no tree settings", ErrInvalidSource)
	case s.Result == nil:
		return fmt.Errorf("%w: no fair-share result yet", ErrInvalidSource)
	case s.Placement == nil:
		return fmt.Errorf("%w: no placement", ErrInvalidSource)
	}
	return nil
}

func (s *Source) settings(id scheduler.OperationID) OperationSettings {
	if s.Operation == nil {
		return OperationSettings{}
	}
	return s.Operation(id)
}

// Leaving is the resources of the interrupting jobs summed per operation
// (see SumLeaving). It is read only once made.
type Leaving struct {
	// byOp is the sum per operation; ops lists its keys in order.
	byOp map[scheduler.OperationID]scheduler.Resources
	ops  []scheduler.OperationID
}

// SumLeaving sums the resources of the interrupting jobs per operation, in
// key order so that float sums do not depend on map order.
func SumLeaving(interrupting map[placement.JobKey]scheduler.Resources) *Leaving {
	keys := make([]placement.JobKey, 0, len(interrupting))
	for k := range interrupting {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	l := &Leaving{byOp: map[scheduler.OperationID]scheduler.Resources{}}
	for _, k := range keys {
		if _, seen := l.byOp[k.Operation]; !seen {
			l.ops = append(l.ops, k.Operation) // keys sort by operation first
		}
		l.byOp[k.Operation] = l.byOp[k.Operation].Add(interrupting[k])
	}
	return l
}

// leaving is s.Leaving, or SumLeaving(s.Interrupting) when it is nil.
func (s *Source) leaving() *Leaving {
	if s.Leaving != nil {
		return s.Leaving
	}
	return SumLeaving(s.Interrupting)
}

func compareKeys(a, b placement.JobKey) int {
	return cmp.Or(cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Task, b.Task), cmp.Compare(a.Index, b.Index))
}

// operation builds an operation's view entry from the placement and the
// result, with its pool chain when withPools is set; ok is false when the
// placement does not know it.
func (s *Source) operation(id scheduler.OperationID, leaving *Leaving, withPools bool) (Operation, bool) {
	u, ok := s.Placement.Operation(id)
	if !ok {
		return Operation{}, false
	}
	set := s.settings(id)
	o := Operation{
		ID: id, Mode: set.Mode,
		Usage:               u.Usage.Sub(leaving.byOp[id]).Max(scheduler.Resources{}),
		NonPreemptibleUsage: s.Settings.usageThreshold(u.Pool, set.NonPreemptibleResourceUsageThreshold),
		NextJob:             u.JobResources, PendingJobs: u.PendingJobCount,
	}
	if withPools {
		o.Pools = s.Settings.chain(u.Pool)
	}
	if e, ok := s.Result.Element(string(id)); ok && e.Kind == scheduler.KindOperation {
		o.FairShare, o.Demand, o.Starvation = e.FairShare.Total, e.DemandShare, e.StarvationStatus
	}
	return o, true
}

// nodeJobs resolves the node's jobs against the placement: start order and
// resources of the running ones, Interrupting for the leaving ones.
func (s *Source) nodeJobs(jobs []NodeJob) []Job {
	out := make([]Job, 0, len(jobs))
	for _, nj := range jobs {
		j := Job{ID: nj.ID, Operation: nj.Key.Operation, Resources: nj.Resources, Class: scheduler.NonPreemptible}
		rj, running := s.Placement.Job(nj.Key)
		_, interrupting := s.Interrupting[nj.Key]
		if running {
			j.Seq = rj.Seq
		}
		j.Interrupting = nj.Leaving || interrupting || !running
		out = append(out, j)
	}
	return out
}

// GracefulView builds the view Graceful needs: the node's jobs of graceful
// operations and those operations (other jobs are left out). Cost:
// O(jobs on the node + interrupting jobs).
func (s *Source) GracefulView(node Node, jobs []NodeJob) (*View, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	v := &View{Node: node, Total: s.Result.Total, Thresholds: s.Settings.thresholds, MaxStarts: s.MaxStarts,
		GracefulTolerance: s.GracefulTolerance}
	leaving := s.leaving()
	described := map[scheduler.OperationID]bool{}
	for _, j := range s.nodeJobs(jobs) {
		id := j.Operation
		if s.settings(id).Mode != ModeGraceful {
			continue
		}
		ok, seen := described[id]
		if !seen {
			var o Operation
			o, ok = s.operation(id, leaving, false)
			described[id] = ok
			if ok {
				v.Operations = append(v.Operations, o)
			}
		}
		if ok {
			v.Jobs = append(v.Jobs, j)
		}
	}
	return v, nil
}

// PreemptionView builds the view Preempt needs: the node's jobs, their
// operations, every starving operation of the result, and the pools on
// their chains. The jobs' classes come from scheduler.ClassifyJobs run on
// live usage: each operation's running jobs in start order, without the
// interrupting ones, against its fair share and demand share from the
// result. Jobs of operations the result does not know yet are
// NonPreemptible. Cost: O(elements of the result + running jobs of the
// node's operations + interrupting jobs).
func (s *Source) PreemptionView(node Node, jobs []NodeJob) (*View, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	v := &View{Node: node, Total: s.Result.Total, Thresholds: s.Settings.thresholds, MaxStarts: s.MaxStarts,
		GracefulTolerance: s.GracefulTolerance, Jobs: s.nodeJobs(jobs)}
	leaving := s.leaving()

	ids := map[scheduler.OperationID]bool{}
	for _, j := range v.Jobs {
		ids[j.Operation] = true
	}
	for _, id := range s.Starving {
		ids[id] = true
	}
	sorted := make([]scheduler.OperationID, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	slices.Sort(sorted)
	known := map[scheduler.OperationID]int{}
	pools := map[scheduler.PoolID]bool{}
	for _, id := range sorted {
		o, ok := s.operation(id, leaving, true)
		if !ok {
			continue
		}
		known[id] = len(v.Operations)
		v.Operations = append(v.Operations, o)
		for _, p := range o.Pools {
			pools[p] = true
		}
	}
	// Jobs of operations the placement does not know cannot be described:
	// they are leaving, and the view keeps them under a stub operation.
	for i := range v.Jobs {
		if _, ok := known[v.Jobs[i].Operation]; !ok {
			id := v.Jobs[i].Operation
			known[id] = len(v.Operations)
			v.Operations = append(v.Operations, Operation{ID: id})
		}
	}
	s.classify(v)
	s.addPools(v, pools, leaving)
	return v, nil
}

// classify sets the classes of the node's running jobs.
func (s *Source) classify(v *View) {
	byOp := map[scheduler.OperationID][]int{}
	for i, j := range v.Jobs {
		if !j.Interrupting {
			byOp[j.Operation] = append(byOp[j.Operation], i)
		}
	}
	th := s.Settings.thresholds
	for i := range v.Operations {
		o := &v.Operations[i]
		idx := byOp[o.ID]
		if len(idx) == 0 {
			continue
		}
		if e, ok := s.Result.Element(string(o.ID)); !ok || e.Kind != scheduler.KindOperation {
			continue // unknown to the engine: NonPreemptible
		}
		running := s.Placement.RunningJobs(o.ID)
		jobs := make([]scheduler.Job, 0, len(running))
		seqs := make([]uint64, 0, len(running))
		for _, rj := range running {
			if _, out := s.Interrupting[rj.Key]; !out {
				jobs = append(jobs, scheduler.Job{Usage: rj.Resources})
				seqs = append(seqs, rj.Seq)
			}
		}
		classes := scheduler.ClassifyJobs(scheduler.ClassifyInput{
			FairShare: o.FairShare, Demand: o.Demand, Total: v.Total,
			AggressiveThreshold: th.Aggressive, Threshold: th.Preemption,
			UsageThreshold: o.NonPreemptibleUsage, Jobs: jobs,
		})
		// seqs ascend: RunningJobs lists the jobs in start order.
		for _, ji := range idx {
			if k, ok := slices.BinarySearch(seqs, v.Jobs[ji].Seq); ok {
				v.Jobs[ji].Class = classes[k].Class
			}
		}
	}
}

// addPools describes the pools on the operations' chains.
func (s *Source) addPools(v *View, pools map[scheduler.PoolID]bool, leaving *Leaving) {
	ids := make([]scheduler.PoolID, 0, len(pools))
	for id := range pools {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	// Leaving usage per pool, summed in operation order.
	left := map[scheduler.PoolID]scheduler.Resources{}
	for _, id := range leaving.ops {
		u, ok := s.Placement.Operation(id)
		if !ok {
			continue
		}
		for _, p := range s.Settings.chain(u.Pool) {
			if pools[p] {
				left[p] = left[p].Add(leaving.byOp[id])
			}
		}
	}
	for _, id := range ids {
		p := Pool{ID: id}
		if u, ok := s.Placement.PoolUsage(id); ok {
			p.Usage = u.Sub(left[id]).Max(scheduler.Resources{})
		}
		if e, ok := s.Result.Element(string(id)); ok && e.Kind == scheduler.KindPool {
			p.Guarantee, p.Starvation = e.StrongGuaranteeShare, e.StarvationStatus
		}
		v.Pools = append(v.Pools, p)
	}
}

// StarvingOperations lists the operations of a result whose starvation
// status is not NonStarving, in element order.
func StarvingOperations(res *scheduler.Result) []scheduler.OperationID {
	out := []scheduler.OperationID{}
	for i := range res.Elements {
		e := &res.Elements[i]
		if e.Kind == scheduler.KindOperation && e.StarvationStatus != scheduler.NonStarving {
			out = append(out, scheduler.OperationID(e.Name))
		}
	}
	return out
}
