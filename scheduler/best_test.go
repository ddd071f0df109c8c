package scheduler

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bestAllocationShare (which divides only near whole quotients) gives what
// dividing on every node gives, including jobs that fit a whole number of
// times and tiny job sizes.
func TestBestAllocationShareMatchesDivision(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	for iter := range 2000 {
		var nodes []Node
		for range 1 + rng.IntN(30) {
			r := Resources{}
			r[CPU] = float64(8 * (1 + rng.IntN(16)))
			r[UserSlots] = r[CPU] * float64(1+rng.IntN(4))
			r[Memory] = r[CPU] * float64(2+rng.IntN(7)) * 1024
			if rng.IntN(3) == 0 {
				r[GPU] = float64(4 * (1 + rng.IntN(2)))
			}
			nodes = append(nodes, Node{Resources: r})
		}
		var tr tree
		tr.total = NewClusterFromNodes(nodes).Total
		tr.ones = Ones(tr.total)
		tr.prepareNodeShapes(nodes)
		var job Resources
		switch iter % 4 {
		case 0: // divides some node exactly
			n := nodes[rng.IntN(len(nodes))].Resources
			k := float64(1 + rng.IntN(8))
			job = n.Scale(1 / k)
		case 1:
			job = Resources{CPU: math.Round(unit(rng)*1600) / 100, Memory: math.Floor(unit(rng) * 65536), UserSlots: float64(rng.IntN(4))}
		case 2:
			job = Resources{CPU: 0.01 * float64(1+rng.IntN(300)), Memory: float64(1 + rng.IntN(4096))}
		default:
			job = Resources{CPU: 5e-324, Memory: float64(1 + rng.IntN(100))}
		}
		got, ok := tr.bestAllocationShare(&job)
		if !ok {
			continue
		}
		usable := 0.0
		for _, n := range tr.nodeShapes {
			fit := math.Inf(1)
			for r := range job {
				if job[r] > 0 {
					fit = min(fit, math.Floor(n.resources[r]/job[r]))
				}
			}
			if fit > 0 && !math.IsInf(fit, 1) {
				usable += float64(n.count * fit * job[Memory])
			}
		}
		want := Ones(tr.total)
		want[Memory] = min(1, usable/tr.total[Memory])
		if got != want {
			t.Fatalf("iteration %d: job %v: got %v, dividing gives %v", iter, job, got, want)
		}
	}
}
