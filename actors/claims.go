package actors

import (
	"sync/atomic"

	"github.com/sharetree/sharetree/scheduler/placement"
)

// jobClaims arbitrates the jobs of an operation that runs in several trees
// (pool_trees with more than one tree, or offloading): one bit per job,
// set by the first tree that starts it. Trees claim from their placer
// goroutines concurrently, so the bits are atomic. A tree may have a cap on
// how many jobs it claims (an offloading share).
type jobClaims struct {
	tasks [][]atomic.Uint64
	// ledgers are the trees' ledgers, by view index: a claim in one is
	// forgotten in the others, so their demand drops at once.
	ledgers []*Ledger
	// caps[i] < 0: no cap.
	caps   []int64
	counts []atomic.Int64
}

// newJobClaims sizes the bitsets for the tasks' job counts; ledgers and caps
// are per tree, in the same order.
func newJobClaims(jobCounts []int, ledgers []*Ledger, caps []int64) *jobClaims {
	c := &jobClaims{tasks: make([][]atomic.Uint64, len(jobCounts)), ledgers: ledgers, caps: caps, counts: make([]atomic.Int64, len(ledgers))}
	for i, n := range jobCounts {
		c.tasks[i] = make([]atomic.Uint64, (n+63)/64)
	}
	return c
}

// view is tree i's side of the claims.
func (c *jobClaims) view(i int) claimView { return claimView{c: c, tree: i} }

// claimView implements placement.JobClaims for one tree.
type claimView struct {
	c    *jobClaims
	tree int
}

var _ placement.JobClaims = claimView{}

// Claim sets the job's bit; false when another tree set it first or this
// tree reached its cap.
func (v claimView) Claim(task, index int) bool {
	c := v.c
	if task < 0 || task >= len(c.tasks) || index < 0 || index/64 >= len(c.tasks[task]) {
		return false
	}
	n := &c.counts[v.tree]
	if c.caps[v.tree] >= 0 && n.Add(1) > c.caps[v.tree] {
		n.Add(-1)
		return false
	}
	word, bit := &c.tasks[task][index/64], uint64(1)<<(index%64)
	for {
		old := word.Load()
		if old&bit != 0 {
			if c.caps[v.tree] >= 0 {
				n.Add(-1)
			}
			return false
		}
		if word.CompareAndSwap(old, old|bit) {
			return true
		}
	}
}

// eachClaimed calls fn for every job some tree has claimed, in task and
// index order.
func (v claimView) eachClaimed(fn func(task, index int)) {
	for ti, words := range v.c.tasks {
		for w := range words {
			for bits, b := words[w].Load(), 0; bits != 0; b, bits = b+1, bits>>1 {
				if bits&1 != 0 {
					fn(ti, w*64+b)
				}
			}
		}
	}
}

// forgetElsewhere drops jobs this tree claimed from the other trees'
// pending jobs. Call it without holding any ledger's lock.
func (v claimView) forgetElsewhere(keys []placement.JobKey) {
	for i, l := range v.c.ledgers {
		if i != v.tree {
			l.forget(keys)
		}
	}
}
