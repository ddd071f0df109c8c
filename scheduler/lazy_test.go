package scheduler

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// A fair_share pool's functions built from the prefix of F that
// sumScaledUntil stops at are exactly those built from the whole F: the
// same MaxFitFactorBySuggestion and FairShareBySuggestion, bit for bit.
func TestSumScaledUntilMatchesWholeSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var w workspace
	stopped := 0
	for iter := range 4000 {
		n := 1 + rng.IntN(12)
		terms := make([]scaledChild, n)
		var varies resourceSet
		constant := rng.IntN(NumResources + 1) // NumResources: none
		for i := range terms {
			fn := randomMonotone(rng, 1)
			if constant < NumResources {
				for j := range fn {
					fn[j].l[constant], fn[j].r[constant] = 0.25, 0.25
				}
			}
			for r := range NumResources {
				if fn[0].l[r] != fn[len(fn)-1].r[r] {
					varies |= 1 << r
				}
			}
			scale := []float64{0, 1, 1, 1.5, 3}[rng.IntN(5)]
			if i == 0 {
				scale = 1
			}
			terms[i] = scaledChild{fn: fn, scale: scale}
		}
		whole := slices.Clone(sumScaled(&w, nil, slices.Clone(terms))) // (sumScaled reuses its argument)
		flo, fhi := whole[0].l, whole[len(whole)-1].l
		var g, lim Share
		for r := range g {
			span := fhi[r] - flo[r]
			switch rng.IntN(4) {
			case 0:
				lim[r] = math.Inf(1)
			case 1:
				lim[r] = flo[r] + span*rng.Float64()
			case 2:
				lim[r] = whole[rng.IntN(len(whole))].l[r]
			default:
				lim[r] = flo[r] + 0.5*span*rng.Float64()
			}
			if rng.IntN(3) > 0 {
				g[r] = flo[r] + span*rng.Float64()*0.5
			}
		}
		wantM, wantS := suggestionFunctions(&w, whole, fhi, g, lim)
		wantM, wantS = slices.Clone(wantM), slices.Clone(wantS)

		prefix, hi := sumScaledUntil(&w, nil, slices.Clone(terms), &stopRule{lim: lim, varies: varies})
		if len(prefix) < len(whole) {
			stopped++
		}
		if !slices.Equal(prefix, whole[:len(prefix)]) {
			t.Fatalf("iteration %d: the prefix is not a prefix of the whole sum:\n%v\n%v", iter, prefix, whole)
		}
		gotM, gotS := suggestionFunctions(&w, prefix, hi, g, lim)
		if !slices.Equal(gotM, wantM) || !slices.Equal(gotS, wantS) {
			t.Fatalf("iteration %d: functions from the prefix (%d of %d points) differ:\nM %v\nwant %v\nS %v\nwant %v",
				iter, len(prefix), len(whole), gotM, wantM, gotS, wantS)
		}
	}
	t.Logf("%d of 4000 sums stopped early", stopped)
	if stopped < 100 {
		t.Errorf("only %d of the sums stopped early: the test does not exercise the stop", stopped)
	}
}
