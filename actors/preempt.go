package actors

import (
	"cmp"
	"slices"
	"time"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
	"github.com/sharetree/sharetree/scheduler/preemption"
)

// preemptState is a tree's preemption state, guarded by the ledger's
// mutex: the settings from the tree configuration, the jobs being
// interrupted (until they leave), each node's last preemptive pass
// (preemptive_scheduling_backoff) and the tree's rate limit.
type preemptState struct {
	cfg          *Config
	settings     *preemption.TreeSettings
	tree         scheduler.TreeConfig
	interrupting map[placement.JobKey]scheduler.Resources
	// leaving is preemption.SumLeaving(interrupting), summed when a pass
	// first needs it after a change (nil: not since the last change);
	// interrupting changes only through interrupt, left and
	// forgetOperation, which drop it.
	leaving *preemption.Leaving
	lastTry map[scheduler.NodeID]time.Time
	// reserved is the room preemption made per node (see reserve.go).
	reserved map[scheduler.NodeID][]reservation
	tokens   float64
	refilled time.Time
	// starving lists the latest result's starving operations; graceful
	// counts the scheduled operations in graceful mode. With neither, a
	// pass skips the preemption views.
	starving []scheduler.OperationID
	graceful int
}

func newPreemptState(cfg *Config) preemptState {
	return preemptState{cfg: cfg, interrupting: map[placement.JobKey]scheduler.Resources{}, lastTry: map[scheduler.NodeID]time.Time{},
		reserved: map[scheduler.NodeID][]reservation{}, tokens: cfg.PreemptionRateLimit}
}

// forgetOperation drops the interruptions of a removed operation.
func (s *preemptState) forgetOperation(id scheduler.OperationID) {
	for k := range s.interrupting {
		if k.Operation == id {
			delete(s.interrupting, k)
			s.leaving = nil
		}
	}
}

// interrupt records that job k, holding r, is being interrupted.
func (s *preemptState) interrupt(k placement.JobKey, r scheduler.Resources) {
	s.interrupting[k] = r
	s.leaving = nil
}

// left records that job k left (it was interrupting or not).
func (s *preemptState) left(k placement.JobKey) {
	if _, ok := s.interrupting[k]; ok {
		delete(s.interrupting, k)
		s.leaving = nil
	}
}

// leavingSums returns preemption.SumLeaving(s.interrupting), summed again
// only after a change.
func (s *preemptState) leavingSums() *preemption.Leaving {
	if s.leaving == nil {
		s.leaving = preemption.SumLeaving(s.interrupting)
	}
	return s.leaving
}

// take spends n tokens of the rate limit if it has at least one (see
// Config.PreemptionRateLimit: the bucket may go into debt).
func (s *preemptState) take(n int, now time.Time) bool {
	rate := s.cfg.PreemptionRateLimit
	if rate <= 0 {
		return false
	}
	burst := max(rate, 1)
	if !s.refilled.IsZero() {
		s.tokens = min(burst, s.tokens+float64(now.Sub(s.refilled).Seconds()*rate))
	}
	s.refilled = now
	if s.tokens < 1 {
		return false
	}
	s.tokens -= float64(n)
	return true
}

// interruptOrder is a job the scheduler interrupts.
type interruptOrder struct {
	key      placement.JobKey
	jobID    string
	timeout  time.Duration
	graceful bool
	forOp    scheduler.OperationID
	reason   string
}

// preemptLocked runs graceful preemption on every pass and preemption for
// starving operations at most once per preemptive_scheduling_backoff per
// node, within the tree's rate limit. free is what the node has left after
// this pass's starts, reserved what earlier preemptions keep on it (see
// reserve.go). The jobs chosen are marked interrupting at once, so no
// other node's pass counts their resources again.
func (l *Ledger) preemptLocked(node scheduler.NodeID, total, free, reserved scheduler.Resources, jobs []preemption.NodeJob, now time.Time) []interruptOrder {
	res := l.results.current() // read under l.mu, see setResult
	if l.pre.settings == nil || res == nil || len(jobs) == 0 {
		return nil
	}
	// Graceful preemption only takes jobs of graceful operations: a node
	// without one has nothing for it.
	gracefulHere := l.pre.graceful > 0 && slices.ContainsFunc(jobs, func(j preemption.NodeJob) bool { return l.graceful(j.Key.Operation) })
	last, tried := l.pre.lastTry[node]
	starvingDue := len(l.pre.starving) > 0 && (!tried || now.Sub(last) >= l.pre.tree.PreemptiveSchedulingBackoff)
	if !gracefulHere && !starvingDue {
		return nil
	}
	src := &preemption.Source{
		Settings: l.pre.settings, Result: res, Placement: l.p,
		Interrupting: l.pre.interrupting, Leaving: l.pre.leavingSums(),
		Starving: l.pre.starving, GracefulTolerance: l.pre.cfg.GracefulTolerance,
		Operation: func(id scheduler.OperationID) preemption.OperationSettings {
			if l.graceful(id) {
				return preemption.OperationSettings{Mode: preemption.ModeGraceful}
			}
			return preemption.OperationSettings{}
		},
	}
	view := preemption.Node{ID: node, Total: total, Free: free, Reserved: reserved}
	var out []interruptOrder
	// keyOf finds a job's key: jobs are sorted by id (passRequest.jobs).
	keyOf := func(id preemption.JobID) placement.JobKey {
		i, _ := slices.BinarySearchFunc(jobs, id, func(j preemption.NodeJob, id preemption.JobID) int { return cmp.Compare(j.ID, id) })
		return jobs[i].Key
	}
	mark := func(o interruptOrder, r scheduler.Resources) {
		l.pre.interrupt(o.key, r)
		out = append(out, o)
	}
	if gracefulHere {
		if gv, err := src.GracefulView(view, jobs); err == nil {
			if gi, err := preemption.Graceful(gv); err == nil {
				for _, g := range gi {
					mark(interruptOrder{key: keyOf(g.Job), jobID: string(g.Job), timeout: l.pre.tree.AllocationGracefulPreemptionTimeout,
						graceful: true, reason: "graceful preemption: " + g.Reason.String()}, g.Resources)
				}
			}
		}
	}
	if !starvingDue {
		return out
	}
	if len(out) > 0 {
		// The view must see this pass's graceful interruptions.
		for i := range jobs {
			if _, ok := l.pre.interrupting[jobs[i].Key]; ok {
				jobs[i].Leaving = true
			}
		}
	}
	src.Leaving = l.pre.leavingSums() // with this pass's graceful interruptions
	pv, err := src.PreemptionView(view, jobs)
	if err != nil {
		return out
	}
	plan, err := preemption.Preempt(pv)
	if err != nil || len(plan.Decisions) == 0 {
		if len(plan.Refusals) > 0 {
			l.pre.lastTry[node] = now
		}
		return out
	}
	l.pre.lastTry[node] = now
	for _, d := range plan.Decisions {
		if !l.pre.take(len(d.Victims), now) {
			break
		}
		for _, v := range d.Victims {
			mark(interruptOrder{key: keyOf(v.Job), jobID: string(v.Job), timeout: l.pre.tree.AllocationPreemptionTimeout,
				forOp: d.Operation, reason: "preemption: " + v.Reason.String()}, v.Resources)
		}
		l.reserveLocked(node, d.Operation, d.Start, l.pre.tree.AllocationPreemptionTimeout, now)
	}
	return out
}

// graceful reports whether operation id runs in graceful preemption mode.
func (l *Ledger) graceful(id scheduler.OperationID) bool {
	op := l.ops[id]
	return op != nil && op.spec.GetPreemptionMode() == pb.PreemptionMode_PREEMPTION_MODE_GRACEFUL
}
