package scheduler

import (
	"math"
	"slices"
)

// integralLists returns the burst and relaxed pools in depth-first pre-order
// (the burst priority order).
func (t *tree) integralLists() (burst, relaxed []int) {
	for _, i := range t.pools[1:] {
		e := &t.el[i]
		switch t.data(e).integral {
		case GuaranteeBurst:
			burst = append(burst, i)
		case GuaranteeRelaxed:
			relaxed = append(relaxed, i)
		}
	}
	return burst, relaxed
}

// updateVolumes refills every integral pool's volume by its flow and consumes
// the integral share granted at the previous update, over dt seconds. The
// capacity is round(total × flow ratio) × saturation period, but a capacity
// below the existing volume never destroys it. What overflows may be handed
// to hungry siblings (free volume distribution). No volume is left above
// MaxVolume (the largest the next update accepts in the state it is
// given): the capacity the bookkeeping uses is capped there, and so is every
// volume once the free volume is handed out and cpu rounded.
func (t *tree) updateVolumes(pools []int, dt float64) {
	if t.total.IsZero() {
		return
	}
	satSeconds := t.cfg.Integral.PoolCapacitySaturationPeriod.Seconds()
	for _, i := range pools {
		e := &t.el[i]
		t.vol(e).capacity = t.total.Scale(t.data(e).flowRatio).Round().Scale(satSeconds)
		for r := range NumResources {
			old := t.vol(e).volume[r]
			v := old + float64(t.total[r]*dt*t.data(e).flowRatio) - float64(t.total[r]*dt*t.data(e).lastShareRatio)
			v = max(v, 0)
			capacity := min(t.vol(e).capacity[r], MaxVolume)
			upper := max(old, capacity) // old <= MaxVolume (see loadPrevious)
			t.vol(e).overflow[r] = max(v-upper, 0)
			if t.data(e).canAcceptFreeVolume {
				t.vol(e).acceptable[r] = max(capacity-v, 0)
			}
			t.vol(e).volume[r] = min(v, upper)
		}
	}
	if t.anyDistributes() {
		t.collectFreeVolume(0)
		t.distributeFreeVolume(0, Resources{})
	}
	for _, i := range pools {
		e := &t.el[i]
		t.vol(e).volume[CPU] = math.Round(t.vol(e).volume[CPU]*100) / 100
		// A share of the free volume, or the rounding, may pass the cap
		// by an ulp.
		for r := range NumResources {
			t.vol(e).volume[r] = min(t.vol(e).volume[r], MaxVolume)
		}
	}
}

func (t *tree) anyDistributes() bool {
	for _, i := range t.pools[1:] {
		if e := &t.el[i]; t.data(e).integral == GuaranteeNone && t.data(e).distributeFreeVolume {
			return true
		}
	}
	return false
}

// collectFreeVolume computes, bottom-up over non-integral pools, what their
// child pools overflow beyond what siblings can accept (the pool's own
// overflow) and what they can still accept.
func (t *tree) collectFreeVolume(i int) {
	e := &t.el[i]
	if e.kind == KindPool && t.data(e).integral != GuaranteeNone {
		return
	}
	var overflow, acceptable Resources
	for _, c := range t.poolChildren(e) {
		ce := &t.el[c]
		t.collectFreeVolume(c)
		overflow = overflow.Add(t.vol(ce).overflow)
		acceptable = acceptable.Add(t.vol(ce).acceptable)
	}
	t.vol(e).childrenOverflow = overflow
	for r := range NumResources {
		diff := overflow[r] - acceptable[r]
		if diff > 0 {
			t.vol(e).overflow[r], t.vol(e).acceptable[r] = diff, 0
		} else {
			t.vol(e).overflow[r] = 0
			if e.kind == KindRoot || t.data(e).canAcceptFreeVolume {
				t.vol(e).acceptable[r] = -diff
			} else {
				t.vol(e).acceptable[r] = 0
			}
		}
	}
}

// distributeFreeVolume hands free volume down: an integral pool adds what it
// accepted to its volume; a distributing non-integral pool water-fills its
// accepted volume plus its children's overflow among hungry child pools,
// weighted by their total flow ratios. The root never distributes.
func (t *tree) distributeFreeVolume(i int, accepted Resources) {
	e := &t.el[i]
	if e.kind == KindPool && t.data(e).integral != GuaranteeNone {
		t.vol(e).acceptedFreeVolume = accepted
		t.vol(e).volume = t.vol(e).volume.Add(accepted)
		return
	}
	pools := t.poolChildren(e)
	given := make([]Resources, len(pools))
	if e.kind == KindPool && t.data(e).distributeFreeVolume {
		free := accepted.Add(t.vol(e).childrenOverflow)
		for r := range NumResources {
			if free[r] > 0 {
				waterFill(t, pools, r, free[r], given)
			}
		}
	}
	for k, c := range pools {
		t.distributeFreeVolume(c, given[k])
	}
}

func waterFill(t *tree, pools []int, r int, free float64, given []Resources) {
	type hungry struct {
		k      int
		accept float64
		weight float64
	}
	var hs []hungry
	sumW := 0.0
	for k, c := range pools {
		ce := &t.el[c]
		if t.vol(ce).acceptable[r] > epsilon && t.data(ce).totalFlowRatio > epsilon {
			hs = append(hs, hungry{k, t.vol(ce).acceptable[r], t.data(ce).totalFlowRatio})
			sumW += t.data(ce).totalFlowRatio
		}
	}
	slices.SortStableFunc(hs, func(a, b hungry) int {
		ra, rb := a.accept/a.weight, b.accept/b.weight
		switch {
		case ra < rb:
			return -1
		case ra > rb:
			return 1
		}
		return a.k - b.k
	})
	for i, h := range hs {
		part := free * h.weight / sumW
		if part >= h.accept {
			given[h.k][r] += h.accept
			free -= h.accept
			sumW -= h.weight
			continue
		}
		for _, rest := range hs[i:] {
			given[rest.k][r] += free * rest.weight / sumW
		}
		return
	}
}

// ratioByVolume is the constant share that would consume the pool's volume in
// one smooth period.
func (t *tree) ratioByVolume(e *element) float64 {
	return minRatio(t.vol(e).volume, t.total) / t.cfg.Integral.SmoothPeriod.Seconds()
}

// hierarchicalAvailable is min over e and its non-root ancestors of
// limits − (strong guarantee + integral share), at least 0.
func (t *tree) hierarchicalAvailable(i int) Share {
	var out Share
	for r := range out {
		out[r] = math.Inf(1)
	}
	for ; i > 0; i = int(t.el[i].parent) {
		a := &t.el[i]
		out = out.Min(a.limitsShare.Sub(t.data(a).sgs.Add(t.data(a).pis)))
	}
	return out.ClampZero()
}

// shaveToLimit returns v lowered, if needed, so that sgs + v stays within
// limits despite rounding.
func shaveToLimit(v, sgs, limits Share) Share {
	for r := range v {
		for k := 0; k < 4 && sgs[r]+v[r] > limits[r] && v[r] > 0; k++ {
			v[r] = max(0, math.Nextafter(min(v[r], limits[r]-sgs[r]), math.Inf(-1)))
		}
	}
	return v
}

// addIntegralShare adds a grant to the proposed integral share of i and every
// ancestor; non-root elements stay within their limits, the root may be
// overcommitted.
func (t *tree) addIntegralShare(i int, grant Share) {
	for ; i >= 0; i = int(t.el[i].parent) {
		e := &t.el[i]
		pd := t.data(e)
		pd.pis = pd.pis.Add(grant)
		if i > 0 {
			pd.pis = shaveToLimit(pd.pis.Min(e.limitsShare.Sub(pd.sgs).ClampZero()), pd.sgs, e.limitsShare)
		}
	}
}

// grantBurst serves burst pools in depth-first order: each gets what its
// guarantees alone buy with its burst ratio (capped by its volume and the
// room its ancestors have) as an integral share, pushed up to its ancestors
// before the next pool is served.
func (t *tree) grantBurst(burst []int) {
	for _, i := range burst {
		e := &t.el[i]
		x := min(t.data(e).burstRatio, t.ratioByVolume(e))
		var proposed Share
		for r := range proposed {
			proposed[r] = x
		}
		proposed = proposed.Min(t.hierarchicalAvailable(i)).ClampZero()
		proposed = shaveToLimit(proposed, t.data(e).sgs, e.limitsShare)
		t.data(e).pis = proposed
		t.prepare(i)
		integral := t.sAt(i, 0).Sub(t.data(e).sgs).ClampZero()
		t.reset(i)
		t.data(e).pis = Share{}
		t.addIntegralShare(i, integral)
		t.data(e).lastShareRatio = integral.MaxComponent()
	}
}

// grantRelaxed shares what guarantees leave free among relaxed pools,
// weighted by their volume ratios, each capped by its volume and by the
// multiplier × its flow ratio.
func (t *tree) grantRelaxed(relaxed []int) {
	root := &t.el[0]
	var used Share
	for _, c := range t.poolChildren(root) { // operations hold no guarantee
		ce := &t.el[c]
		used = used.Add(t.data(ce).sgs.Add(t.data(ce).pis).Min(ce.demandShare))
	}
	var available Share
	for r := range available {
		available[r] = max(1-used[r], 0)
	}
	type candidate struct {
		i      int
		ratio  float64
		weight float64
		saved  Share
		// base is the pool's guarantee when its functions were built: its
		// strong guarantee plus the integral shares already pushed up from
		// burst pools below it. Only what S adds above it is a new grant.
		base Share
	}
	var cands []candidate
	minRatioV := math.Inf(1)
	for _, i := range relaxed {
		e := &t.el[i]
		ratio := t.ratioByVolume(e)
		if ratio <= 0 {
			continue
		}
		mult := t.cfg.Integral.RelaxedShareMultiplierLimit
		if m := t.pool(e).IntegralGuarantees.RelaxedShareMultiplierLimit; m != nil {
			mult = *m
		}
		saved := e.limitsShare
		e.limitsShare = e.limitsShare.Min(t.data(e).sgs.AddScalar(min(ratio, mult*t.data(e).flowRatio)))
		t.prepare(i)
		cands = append(cands, candidate{i: i, ratio: ratio, saved: saved, base: t.data(e).sgs.Add(t.data(e).pis)})
		minRatioV = min(minRatioV, ratio)
	}
	if len(cands) == 0 {
		return
	}
	for k := range cands {
		cands[k].weight = cands[k].ratio / minRatioV
	}
	grants := func(x float64) Share {
		var sum Share
		for _, c := range cands {
			sum = sum.Add(t.sAt(c.i, min(1, x*c.weight)).Sub(c.base).ClampZero())
		}
		return sum
	}
	lo, hi := 0.0, 1.0
	if available.Dominates(grants(1)) {
		lo = 1
	} else {
		for range 60 {
			mid := (lo + hi) / 2
			if available.Dominates(grants(mid)) {
				lo = mid
			} else {
				hi = mid
			}
		}
	}
	for _, c := range cands {
		e := &t.el[c.i]
		integral := t.sAt(c.i, min(1, lo*c.weight)).Sub(c.base).ClampZero()
		e.limitsShare = c.saved
		t.reset(c.i)
		limited := integral.Min(t.hierarchicalAvailable(c.i))
		t.addIntegralShare(c.i, limited)
		t.data(e).lastShareRatio = limited.MaxComponent()
	}
}
