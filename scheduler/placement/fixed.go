package placement

import (
	"math"

	"github.com/sharetree/sharetree/scheduler"
)

// vec is a resource vector in fixed point: cpu in hundredths of a core,
// every other resource in whole units.
type vec [scheduler.NumResources]int64

const (
	// unlimited stands for an absent limit and clamps huge free amounts.
	unlimited int64 = 1 << 62
	// maxJobAmount bounds one job's amount of one resource (in fixed
	// units), so that sums of many jobs cannot overflow.
	maxJobAmount = 1 << 52
	// nudge absorbs float noise such as 0.3*100 = 29.999999999999996.
	nudge = 1e-6
)

// scale is the number of fixed units per resource unit.
var scale = [scheduler.NumResources]float64{1, 100, 1, 1, 1}

// unlimitedVec has every component unlimited.
var unlimitedVec = vec{unlimited, unlimited, unlimited, unlimited, unlimited}

func (a vec) add(b vec) vec {
	for i := range a {
		a[i] += b[i]
	}
	return a
}

func (a vec) sub(b vec) vec {
	for i := range a {
		a[i] -= b[i]
	}
	return a
}

func (a vec) min(b vec) vec {
	for i := range a {
		a[i] = min(a[i], b[i])
	}
	return a
}

func (a vec) mul(k int64) vec {
	for i := range a {
		a[i] *= k
	}
	return a
}

// fits reports whether b <= a componentwise.
func (a vec) fits(b vec) bool {
	return a[0] >= b[0] && a[1] >= b[1] && a[2] >= b[2] && a[3] >= b[3] && a[4] >= b[4]
}

// resources converts back to floating amounts.
func (a vec) resources() scheduler.Resources {
	var out scheduler.Resources
	for i, v := range a {
		out[i] = float64(v) / scale[i]
	}
	return out
}

// floorVec converts an offered amount (free resources, a total): rounded
// down, NaN and negatives as 0, clamped at unlimited.
func floorVec(r scheduler.Resources) vec {
	var out vec
	for i, v := range r {
		out[i] = floorAmount(v, i)
	}
	return out
}

func floorAmount(v float64, i int) int64 {
	if !(v > 0) {
		return 0
	}
	x := math.Floor(float64(v*scale[i]) + nudge)
	if x >= float64(unlimited) {
		return unlimited
	}
	return int64(x)
}

// limitVec converts limits: absent resources are unlimited.
func limitVec(l scheduler.PartialResources) vec {
	out := unlimitedVec
	for i := range scheduler.NumResources {
		if l.Set.Has(scheduler.ResourceType(i)) {
			out[i] = floorAmount(l.Values[i], i)
		}
	}
	return out
}

// validLimits reports the first set limit that is NaN or negative.
func validLimits(l scheduler.PartialResources) (scheduler.ResourceType, bool) {
	for i := range scheduler.NumResources {
		r := scheduler.ResourceType(i)
		if l.Set.Has(r) && (math.IsNaN(l.Values[i]) || l.Values[i] < 0) {
			return r, false
		}
	}
	return 0, true
}

// jobVec converts a job's resources, rounding up. ok is false when an
// amount is NaN, infinite, negative or above maxJobAmount fixed units.
func jobVec(r scheduler.Resources) (v vec, bad scheduler.ResourceType, ok bool) {
	for i, x := range r {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return vec{}, scheduler.ResourceType(i), false
		}
		f := math.Ceil(float64(x*scale[i]) - nudge)
		if f < 0 {
			f = 0
		}
		if f > maxJobAmount {
			return vec{}, scheduler.ResourceType(i), false
		}
		v[i] = int64(f)
	}
	return v, 0, true
}
