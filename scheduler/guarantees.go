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
	root := &t.el[0]
	t.data(root).effectiveSG = t.total
	var pools []*element
	var implicit []float64
	for _, i := range t.pools {
		e := &t.el[i]
		pools = pools[:0]
		for _, c := range t.poolChildren(e) {
			pools = append(pools, &t.el[c])
		}
		if len(pools) == 0 {
			continue
		}
		parentSG := t.data(e).effectiveSG
		for _, c := range pools {
			t.data(c).effectiveSG = t.data(c).strongGuarantee.OrZero()
		}
		for r := range NumResources {
			rt := ResourceType(r)
			if rt == main {
				continue
			}
			explicitSum, implicitSum := 0.0, 0.0
			implicit = grow(implicit, len(pools))
			clear(implicit)
			for k, c := range pools {
				sg := t.data(c).strongGuarantee
				if sg.Set.Has(rt) {
					explicitSum += sg.Values[r]
					continue
				}
				childMain := 0.0
				if sg.Set.Has(main) {
					childMain = sg.Values[main]
				}
				if parentSG[main] > 0 {
					implicit[k] = childMain / parentSG[main] * parentSG[r]
				}
				implicitSum += implicit[k]
			}
			scale := 1.0
			if i != 0 {
				residual := max(parentSG[r]-explicitSum, 0)
				if implicitSum > residual {
					scale = residual / implicitSum
				}
			}
			for k, c := range pools {
				if t.data(c).strongGuarantee.Set.Has(rt) {
					continue
				}
				t.data(c).effectiveSG[r] = storeResource(rt, implicit[k]*scale)
			}
		}
	}
	for _, i := range t.pools[1:] {
		e := &t.el[i]
		t.data(e).sgs = t.data(e).effectiveSG.ShareOf(t.total)
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
	return math.Trunc(v + 1e-9*max(1, math.Abs(v)))
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
	for _, c := range t.poolChildren(root) {
		ce := &t.el[c]
		rootSGS = rootSGS.Add(t.data(ce).sgs)
		strongSum = strongSum.Add(t.data(ce).effectiveSG)
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
	t.fitStrongGuarantees(0)
	return alerts
}

// exceeds reports the first resource in which a exceeds b (beyond rounding).
func exceeds(a, b Resources) (ResourceType, bool) {
	for r := range a {
		if a[r] > b[r]+1e-9*max(1, b[r]) {
			return ResourceType(r), true
		}
	}
	return 0, false
}

func (t *tree) fitStrongGuarantees(i int) {
	e := &t.el[i]
	t.data(e).sgs = t.data(e).sgs.Min(e.limitsShare)
	// Operations have no strong guarantee: only the child pools count.
	kids := t.poolChildren(e)
	var sum Share
	for _, c := range kids {
		sum = sum.Add(t.data(&t.el[c]).sgs)
	}
	x := 1.0
	for r := range sum {
		if sum[r] > t.data(e).sgs[r] {
			x = min(x, max(t.data(e).sgs[r], 0)/sum[r])
		}
	}
	for _, c := range kids {
		ce := &t.el[c]
		if x < 1 {
			t.data(ce).sgs = t.data(ce).sgs.Scale(x)
		}
		t.fitStrongGuarantees(c)
	}
}
