package dashboard

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/sharetree/sharetree/scheduler"
)

// vec32 is a resource vector kept for display: float32 halves the
// history's memory, and a chart needs no more digits.
type vec32 [scheduler.NumResources]float32

func toVec32(r *scheduler.Resources) (v vec32) {
	for k, x := range r {
		v[k] = float32(x)
	}
	return v
}

// point is one pool's values in one sample.
type point struct {
	slot int32
	// integral: the pool is a burst or relaxed pool (volume is set).
	integral bool
	// starvation is a scheduler.StarvationStatus.
	starvation uint8
	// Absolute amounts: usage, demand and fair share (the share times the
	// cluster total), and an integral pool's accumulated volume
	// (resource·seconds).
	usage, demand, fairShare, volume vec32
}

// sample is a tree's pools at one fair-share update, ordered by slot.
type sample struct {
	at     time.Time
	points []point
}

// treeHistory is one tree's samples, oldest first, and the names of the
// slots their points refer to.
type treeHistory struct {
	samples []sample
	slots   map[string]int32
	names   []string
	// compactAt: the slots are compacted when there are more names than
	// this or twice MaxPools (twice what the last compaction kept, so that
	// compactions are rare however many pools come and go).
	compactAt int
}

// History keeps the recent fair-share updates of each tree for the
// charts. It is safe for concurrent use.
type History struct {
	cfg   Config
	mu    sync.Mutex
	trees map[string]*treeHistory
}

// NewHistory returns an empty History; cfg must be valid (after
// Defaults).
func NewHistory(cfg Config) *History {
	return &History{cfg: cfg, trees: map[string]*treeHistory{}}
}

// Record adds res, a tree's fair-share update, as a sample unless it is
// less than Resolution after the tree's last sample (the same update read
// twice is one sample). An update older than the last sample (a new
// leader's clock) starts the tree's history again. Samples older than
// Window before res are dropped. It reports whether res was recorded.
func (h *History) Record(tree string, res *scheduler.Result) bool {
	if res == nil || res.Now.IsZero() {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	th := h.tree(tree)
	if n := len(th.samples); n > 0 {
		last := th.samples[n-1].at
		if res.Now.Before(last) {
			*th = treeHistory{slots: map[string]int32{}}
		} else if res.Now.Sub(last) < h.cfg.Resolution {
			return false
		}
	}
	h.add(th, sample{at: res.Now, points: th.points(res, h.cfg.MaxPools)})
	return true
}

// tree is the history of tree, made empty if there is none.
func (h *History) tree(tree string) *treeHistory {
	th := h.trees[tree]
	if th == nil {
		th = &treeHistory{slots: map[string]int32{}}
		h.trees[tree] = th
	}
	return th
}

// add appends s to th, newer than its last sample, and drops the samples
// beyond Window (or beyond its count) before it.
func (h *History) add(th *treeHistory, s sample) {
	th.samples = append(th.samples, s)
	cut := s.at.Add(-h.cfg.Window)
	drop := 0
	for drop < len(th.samples) && th.samples[drop].at.Before(cut) {
		drop++
	}
	if limit := int(h.cfg.Window/h.cfg.Resolution) + 1; len(th.samples)-drop > limit {
		drop = len(th.samples) - limit
	}
	if drop > 0 {
		th.samples = slices.Delete(th.samples, 0, drop)
	}
	if len(th.names) > max(2*h.cfg.MaxPools, th.compactAt) {
		th.compact()
		th.compactAt = 2 * len(th.names)
	}
}

// slot is name's slot, a new one if it has none.
func (th *treeHistory) slot(name string) int32 {
	slot, ok := th.slots[name]
	if !ok {
		slot = int32(len(th.names))
		th.slots[name] = slot
		th.names = append(th.names, name)
	}
	return slot
}

// points picks the root and the pools nearest to it (by depth, then in
// the result's order), at most maxPools, and returns their points ordered
// by slot, giving new pools new slots.
func (th *treeHistory) points(res *scheduler.Result, maxPools int) []point {
	var picked []int
	for i := range res.Elements {
		if res.Elements[i].Kind != scheduler.KindOperation {
			picked = append(picked, i)
		}
	}
	slices.SortStableFunc(picked, func(a, b int) int { return cmp.Compare(res.Elements[a].Depth, res.Elements[b].Depth) })
	picked = picked[:min(len(picked), maxPools)]
	out := make([]point, 0, len(picked))
	for _, i := range picked {
		e := &res.Elements[i]
		p := point{slot: th.slot(e.Name), starvation: uint8(e.StarvationStatus), usage: toVec32(&e.ResourceUsage), demand: toVec32(&e.ResourceDemand)}
		var fair scheduler.Resources
		for k := range fair {
			fair[k] = e.FairShare.Total[k] * res.Total[k]
		}
		p.fairShare = toVec32(&fair)
		if e.Integral != nil {
			p.integral, p.volume = true, toVec32(&e.Integral.AccumulatedResourceVolume)
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b point) int { return cmp.Compare(a.slot, b.slot) })
	return out
}

// compact renumbers the slots the kept samples use, forgetting the pools
// none of them has.
func (th *treeHistory) compact() {
	used := make([]bool, len(th.names))
	for _, s := range th.samples {
		for _, p := range s.points {
			used[p.slot] = true
		}
	}
	renumber := make([]int32, len(th.names))
	names := th.names[:0:0]
	clear(th.slots)
	for old, name := range th.names {
		if used[old] {
			renumber[old] = int32(len(names))
			th.slots[name] = int32(len(names))
			names = append(names, name)
		}
	}
	th.names = names
	for _, s := range th.samples {
		for k := range s.points {
			s.points[k].slot = renumber[s.points[k].slot]
		}
	}
}

// Retain forgets the trees not in live.
func (h *History) Retain(live []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for name := range h.trees {
		if !slices.Contains(live, name) {
			delete(h.trees, name)
		}
	}
}

// SeriesPoint is a pool's values at one sample.
type SeriesPoint struct {
	Time time.Time
	// Usage, Demand and FairShare are absolute amounts (FairShare is the
	// share times the cluster total at that update).
	Usage, Demand, FairShare scheduler.Resources
	// Volume is an integral pool's accumulated resource volume
	// (resource·seconds); zero for other pools.
	Volume     scheduler.Resources
	Integral   bool
	Starvation scheduler.StarvationStatus
}

// Series returns a pool's samples, oldest first: the samples of the tree
// that have the pool (none when the pool is not kept, see
// Config.MaxPools), and the number of samples the tree has.
func (h *History) Series(tree, pool string) (points []SeriesPoint, samples int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	th := h.trees[tree]
	if th == nil {
		return nil, 0
	}
	slot, ok := th.slots[pool]
	if !ok {
		return nil, len(th.samples)
	}
	for _, s := range th.samples {
		k, found := slices.BinarySearchFunc(s.points, slot, func(p point, slot int32) int { return cmp.Compare(p.slot, slot) })
		if !found {
			continue
		}
		p := &s.points[k]
		sp := SeriesPoint{Time: s.at, Integral: p.integral, Starvation: scheduler.StarvationStatus(p.starvation)}
		for r := range scheduler.NumResources {
			sp.Usage[r], sp.Demand[r], sp.FairShare[r], sp.Volume[r] =
				float64(p.usage[r]), float64(p.demand[r]), float64(p.fairShare[r]), float64(p.volume[r])
		}
		points = append(points, sp)
	}
	return points, len(th.samples)
}
