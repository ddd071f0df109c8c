package scheduler

import (
	"cmp"
	"slices"
	"testing"
	"time"
)

// BenchmarkLeanOperations estimates how far a new engine core, laid out
// for operations, could bring what the largest tree's 100,000 operations
// cost a cold update (docs/BENCHMARKS.md, fourteenth session). It is not
// the engine and computes no result anyone reads: it does, in a layout
// made for it, the work each operation needs whatever the pools do, and
// leaves out everything else. Its steps, each reported in ms per run:
//
//   - index: validate each operation, index its id, find its pool by
//     name, and count the pools' operations;
//   - scatter: each operation's working record (shares, dominant
//     resource, idle, weight, amounts, name) written once, at its place in
//     pool order: the one move from input order to tree order, which the
//     engine's fill makes too;
//   - functions: per pool, each operation's FairShareBySuggestion (closed
//     form for an idle one, busyOperationS's points for a busy one), the
//     sum of them by one sorted sweep of all their breakpoints, and each
//     operation's fair share at one suggestion;
//   - report: each operation's ElementResult in pool order (a new Result,
//     as Update returns), with its satisfaction and fair share split.
//
// Left out: the pools' own work (their functions, guarantees, integral
// volumes, distribution), fifo order, gangs, best allocation shares,
// starvation, job classifications and the state. Its steps are direct but
// not tuned (the sweep sorts every breakpoint where the engine's lazy
// build reads a heap's first few), so it estimates, not bounds, what
// operations could cost; index, scatter and report do little more than
// move the data.
func BenchmarkLeanOperations(b *testing.B) {
	snap, _ := genSnapshot(benchParams(10000, 100000))
	var l lean
	l.run(b, snap) // the buffers, once
	l.phase = [4]time.Duration{}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		l.run(b, snap)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(snap.Operations)), "ns/operation")
	for k, name := range []string{"index", "scatter", "functions", "report"} {
		b.ReportMetric(float64(l.phase[k].Nanoseconds())/1e6/float64(b.N), name+"-ms")
	}
}

// lean is BenchmarkLeanOperations' working memory, reused across runs
// (as an Engine's is); only the Result is new each run.
type lean struct {
	pools map[PoolID]int32
	ids   nameIndex
	slot  []int32
	start []int32
	pos   []int32
	ops   []leanOp // in pool order
	ev    []leanEvent
	f     vfunc
	ws    workspace
	sink  float64
	// phase sums the time of each step (index, scatter, functions, report).
	phase [4]time.Duration
}

// lap adds the time since *t0 to step k and restarts *t0.
func (l *lean) lap(t0 *time.Time, k int) {
	now := time.Now()
	l.phase[k] += now.Sub(*t0)
	*t0 = now
}

// leanOp is one operation's working record, in pool order.
type leanOp struct {
	name                  string
	d, u, lm              Share
	demand, usage, limits Resources
	fair, kv              Share
	knee, weight          float64
	busy                  vfunc
	dom                   ResourceType
	idle                  bool
}

// leanEvent is one breakpoint of one operation's function in a sum.
type leanEvent struct {
	x  float64
	op int32
	j  int32
}

func (l *lean) run(b *testing.B, snap *Snapshot) {
	ops := snap.Operations
	n := len(ops)
	total := snap.Cluster.Total
	t0 := time.Now()
	if l.pools == nil {
		l.pools = make(map[PoolID]int32, len(snap.Pools))
	}
	clear(l.pools)
	for i := range snap.Pools {
		l.pools[snap.Pools[i].Name] = int32(i + 1)
	}
	l.ids.reset(n)
	l.slot = grow(l.slot, n)
	l.start = grow(l.start, len(snap.Pools)+2)
	clear(l.start)
	// Index: validate, ids, pools; then each operation's place in pool
	// order (a counting sort).
	var keys [findBatch]string
	var hs [findBatch]uint64
	for i := range ops {
		o := &ops[i]
		k := i % findBatch
		if k == 0 {
			batch := ops[i:min(i+findBatch, n)]
			for j := range batch {
				keys[j] = string(batch[j].ID)
			}
			l.ids.hashAhead(keys[:len(batch)], hs[:])
		}
		if err := o.Validate(); err != nil {
			b.Fatal(err)
		}
		if _, ok := l.ids.addHashed(keys[k], hs[k]); !ok {
			b.Fatalf("operation %q twice", o.ID)
		}
		s := int32(0)
		if o.Pool != "" {
			var ok bool
			if s, ok = l.pools[o.Pool]; !ok {
				b.Fatalf("operation %q: no pool %q", o.ID, o.Pool)
			}
		}
		l.slot[i] = s
		l.start[s+1]++
	}
	for s := 1; s < len(l.start); s++ {
		l.start[s] += l.start[s-1]
	}
	l.pos = grow(l.pos, len(l.start))
	copy(l.pos, l.start)
	l.lap(&t0, 0)
	// Shares, written once at each operation's place (the one scatter).
	l.ops = grow(l.ops, n)
	for i := range ops {
		o := &ops[i]
		s := l.slot[i]
		p := &l.ops[l.pos[s]]
		l.pos[s]++
		p.name = string(o.ID)
		p.demand, p.usage = o.Demand, o.Usage
		p.limits = o.ResourceLimits.OrInfinite()
		for r := range NumResources {
			if tr := total[r]; tr > 0 {
				p.d[r], p.u[r], p.lm[r] = o.Demand[r]/tr, o.Usage[r]/tr, min(p.limits[r]/tr, 1)
			} else {
				p.d[r], p.u[r], p.lm[r] = 0, 0, 1
			}
		}
		p.idle = o.Usage.IsZero()
		p.dom = DominantResource(o.Demand, total)
		p.weight = 1
		if o.Weight != nil {
			p.weight = *o.Weight
		}
	}
	l.lap(&t0, 1)

	// Functions, sums and evaluations, pool by pool.
	l.ws.reset(n)
	for s := range len(l.start) - 1 {
		group := l.ops[l.start[s]:l.start[s+1]]
		if len(group) == 0 {
			continue
		}
		wmin := 0.0
		for i := range group {
			if w := group[i].weight; wmin == 0 || w < wmin {
				wmin = w
			}
		}
		l.ev = l.ev[:0]
		for i := range group {
			p := &group[i]
			sc := p.weight / wmin
			if p.idle {
				p.idleKnee()
				l.ev = append(l.ev, leanEvent{x: p.knee / sc, op: int32(i), j: 1})
				continue
			}
			f, ok := busyOperationS(&l.ws, p.u, p.d, p.lm)
			if !ok {
				f = operationS(&l.ws, operationFunc(l.ws.f, p.u, p.d, false), p.lm)
			}
			p.busy = f
			p.kv = limitedDemand(f)
			for j := 1; j < len(f); j++ {
				l.ev = append(l.ev, leanEvent{x: f[j].x / sc, op: int32(i), j: int32(j)})
			}
		}
		slices.SortFunc(l.ev, func(a, b leanEvent) int {
			if c := cmp.Compare(a.x, b.x); c != 0 {
				return c
			}
			return cmp.Compare(a.op, b.op)
		})
		// The sum: the running slope changes at each breakpoint.
		var slope, value Share
		for i := range group {
			p := &group[i]
			sc := p.weight / wmin
			var first Share
			if p.idle {
				first = p.idleSlope(sc)
			} else {
				addTo(&value, &p.busy[0].r)
				if len(p.busy) > 1 {
					first = lerpSlope(p.busy, 0, sc)
				}
			}
			addTo(&slope, &first)
		}
		out := append(l.f[:0], vpoint{x: 0, l: value, r: value})
		prev := 0.0
		for _, e := range l.ev {
			dx := e.x - prev
			for r := range value {
				value[r] += float64(slope[r] * dx)
			}
			prev = e.x
			p := &group[e.op]
			sc := p.weight / wmin
			if p.idle {
				gone := p.idleSlope(sc)
				for r := range slope {
					slope[r] -= gone[r]
				}
			} else {
				f := p.busy
				j := int(e.j)
				for r := range value {
					value[r] += f[j].r[r] - f[j].l[r]
				}
				o := lerpSlope(f, j-1, sc)
				var nw Share
				if j+1 < len(f) {
					nw = lerpSlope(f, j, sc)
				}
				for r := range slope {
					slope[r] += nw[r] - o[r]
				}
			}
			out = appendV(out, e.x, value, value)
		}
		l.f = out
		l.sink += out[len(out)-1].r[0]
		// Evaluations at one suggestion.
		for i := range group {
			p := &group[i]
			sg := min(1, 0.3*p.weight/wmin)
			if p.idle {
				k := p.knee
				switch {
				case k <= 0:
					p.fair = Share{}
				case sg >= k:
					p.fair = p.kv
				default:
					w := sg / k
					for r := range NumResources {
						p.fair[r] = p.kv[r] * w
					}
				}
				continue
			}
			f := p.busy
			f.atIndexTo(&p.fair, sg, f.search(sg))
		}
	}
	l.lap(&t0, 2)

	// Report, in pool order.
	res := make([]ElementResult, n)
	k := 0
	for s := range len(l.start) - 1 {
		parent := RootID
		depth := 1
		if s > 0 {
			parent = string(snap.Pools[s-1].Name)
			depth = 2
		}
		for i := l.start[s]; i < l.start[s+1]; i++ {
			p := &l.ops[i]
			r := &res[k]
			k++
			r.Kind = KindOperation
			r.Name = p.name
			r.Parent = parent
			r.Depth = depth
			r.DemandShare, r.UsageShare, r.LimitsShare = p.d, p.u, p.lm
			r.LimitedDemandShare = p.kv
			var zero Share
			splitShareInto(&r.FairShare, &p.fair, &zero, &zero)
			r.DominantResource = p.dom
			r.Weight = p.weight
			r.ResourceDemand, r.ResourceUsage, r.ResourceLimits = p.demand, p.usage, p.limits
			r.Satisfaction = localSatisfaction(&p.u, &p.fair, &p.d)
			r.FifoIndex = k
			r.EffectiveFairShareStarvationTolerance = 0.8
		}
	}
	l.sink += res[n-1].Satisfaction
	l.lap(&t0, 3)
}

// idleKnee sets an idle operation's closed form: S(s) = kv·min(s/knee, 1),
// kv its demand share cut where its first limit binds.
func (p *leanOp) idleKnee() {
	d, lim := &p.d, &p.lm
	c, maxD := 1.0, 0.0
	for r := range d {
		if d[r] > 0 {
			maxD = max(maxD, d[r])
			if lim[r] < d[r] {
				c = min(c, lim[r]/d[r])
			}
		}
	}
	for r := range d {
		p.kv[r] = d[r] * c
	}
	p.knee = maxD * c
}

// idleSlope is the slope of an idle operation's closed form up to its
// knee, in the abscissa scaled by sc (0 when it demands nothing).
func (p *leanOp) idleSlope(sc float64) Share {
	var s Share
	if k := p.knee; k > 0 {
		for r := range s {
			s[r] = p.kv[r] / (k / sc)
		}
	}
	return s
}

// lerpSlope is the slope of f's segment after breakpoint j, in the
// scaled abscissa.
func lerpSlope(f vfunc, j int, sc float64) Share {
	var s Share
	dx := (f[j+1].x - f[j].x) / sc
	if dx <= 0 {
		return s
	}
	for r := range s {
		s[r] = (f[j+1].l[r] - f[j].r[r]) / dx
	}
	return s
}
