package scheduler

import (
	"fmt"
	"math"
)

// inferStrongGuarantees computes every pool's effective strong guarantee
// resources top-down: explicit values are kept; a resource a pool does not
// set (other than the main resource) is inferred as
// (pool main / parent main) × parent's effective value, scaled down under a
// non-root parent when the inferred values exceed what explicit siblings
// leave, and stored as resources (integers truncate, cpu rounds to 0.01).
func (t *tree) inferStrongGuarantees() {
	main := t.cfg.MainResource
	pd := t.pd[:len(t.pools)] // the pools' data and tree by index in pools, in pre-order
	pd[0].effectiveSG = t.total
	var implicit []float64
	for k := range pd {
		n := &t.ordNode[k]
		pools := t.ordKids[n.lo:n.hi]
		if len(pools) == 0 {
			continue
		}
		parentSG := pd[k].effectiveSG
		for _, c := range pools {
			pd[c].effectiveSG = pd[c].strongGuarantee.OrZero()
		}
		for r := range NumResources {
			rt := ResourceType(r)
			if rt == main {
				continue
			}
			explicitSum, implicitSum := 0.0, 0.0
			implicit = grow(implicit, len(pools))
			clear(implicit)
			for j, c := range pools {
				sg := &pd[c].strongGuarantee
				if sg.Set.Has(rt) {
					explicitSum += sg.Values[r]
					continue
				}
				childMain := 0.0
				if sg.Set.Has(main) {
					childMain = sg.Values[main]
				}
				if parentSG[main] > 0 {
					implicit[j] = childMain / parentSG[main] * parentSG[r]
				}
				implicitSum += implicit[j]
			}
			scale := 1.0
			if k != 0 {
				residual := max(parentSG[r]-explicitSum, 0)
				if implicitSum > residual {
					scale = residual / implicitSum
				}
			}
			for j, c := range pools {
				if pd[c].strongGuarantee.Set.Has(rt) {
					continue
				}
				pd[c].effectiveSG[r] = storeResource(rt, float64(implicit[j]*scale))
			}
		}
	}
	for k := 1; k < len(pd); k++ {
		pd[k].sgs = pd[k].effectiveSG.ShareOf(t.total)
	}
}

// storeResource stores a computed amount into a resource field: integer
// resources truncate toward zero, cpu rounds to 0.01. A relative nudge of
// 1e-9 keeps values such as 99.99999999999999 (meant as 100) from truncating
// down.
func storeResource(r ResourceType, v float64) float64 {
	if r == CPU {
		return math.Round(v*100) / 100
	}
	return math.Trunc(v + float64(1e-9*max(1, math.Abs(v))))
}

// adjustGuarantees validates the root's guarantees against the cluster
// (raising overcommit alerts and scaling strong and burst guarantees down
// together when they exceed it), then fits every pool's strong guarantee
// share into its parent's, top-down, with one scalar for all children and all
// resources.
func (t *tree) adjustGuarantees(burst []int) []Alert {
	var alerts []Alert
	root := &t.el[0]
	var rootSGS Share
	var strongSum Resources
	for _, c := range t.ordKids[t.ordNode[0].lo:t.ordNode[0].hi] {
		rootSGS = rootSGS.Add(t.pd[c].sgs)
		strongSum = strongSum.Add(t.pd[c].effectiveSG)
	}
	flow := t.total.Scale(t.data(root).totalFlowRatio).Round()
	if r, over := exceeds(strongSum.Add(flow), t.total); over {
		alerts = append(alerts, Alert{Code: AlertGuaranteesOvercommit, Message: fmt.Sprintf(
			"strong guarantees (%s) plus integral resource flows (%s) of the root's pools exceed the cluster in %s (%g > %g)",
			strongSum, flow, r, strongSum[r]+flow[r], t.total[r])})
	}
	burstAbs := t.total.Scale(t.data(root).totalBurstRatio).Round()
	if r, over := exceeds(strongSum.Add(burstAbs), t.total); over {
		burstSum := 0.0
		for _, b := range burst {
			burstSum += t.data(&t.el[b]).burstRatio
		}
		x := 1.0
		for k := range NumResources {
			if t.total[k] > 0 {
				if v := rootSGS[k] + burstSum; v > 1 {
					x = min(x, 1/v)
				}
			}
		}
		alerts = append(alerts, Alert{Code: AlertGuaranteesOvercommit, Message: fmt.Sprintf(
			"strong guarantees (%s) plus burst guarantees (%s) of the root's pools exceed the cluster in %s (%g > %g); strong and burst guarantees are scaled by %.6g",
			strongSum, burstAbs, r, strongSum[r]+burstAbs[r], t.total[r], x)})
		rootSGS = rootSGS.Scale(x)
		for _, b := range burst {
			t.data(&t.el[b]).burstRatio *= x
		}
	}
	t.data(root).sgs = rootSGS
	t.fitStrongGuarantees()
	return alerts
}

// exceeds reports the first resource in which a exceeds b (beyond rounding).
func exceeds(a, b Resources) (ResourceType, bool) {
	for r := range a {
		if a[r] > b[r]+float64(1e-9*max(1, b[r])) {
			return ResourceType(r), true
		}
	}
	return 0, false
}

// fitStrongGuarantees fits each pool's strong guarantee share (the
// root's first) into its limits, and its child pools' into it, scaled by
// one scalar. It reads the pools' data alone, in pre-order (see ordNode):
// a pool's share is final before its children's are scaled into it.
func (t *tree) fitStrongGuarantees() {
	pd := t.pd[:len(t.pools)]
	for k := range pd {
		p := &pd[k]
		limits := t.ones // the root's limits share
		if k != 0 {
			limits = p.limits.ShareOf(t.total) // as poolAttributes sets the pool's
		}
		p.sgs = p.sgs.Min(limits)
		// Operations have no strong guarantee: only the child pools count.
		kids := t.ordKids[t.ordNode[k].lo:t.ordNode[k].hi]
		var sum Share
		for _, c := range kids {
			sum = sum.Add(pd[c].sgs)
		}
		x := 1.0
		for r := range sum {
			if sum[r] > p.sgs[r] {
				x = min(x, max(p.sgs[r], 0)/sum[r])
			}
		}
		if x < 1 {
			for _, c := range kids {
				pd[c].sgs = pd[c].sgs.Scale(x)
			}
		}
	}
}
