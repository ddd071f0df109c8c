package scheduler

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// wholeFunctions builds pool i's functions at once, the way the engine
// builds them on demand, from its children's whole FairShareBySuggestion
// (whole[c]; operations' are the engine's own) and the guarantee and
// limits the pool was prepared with.
func wholeFunctions(t *tree, whole []vfunc, i int) (sfunc, vfunc) {
	e := &t.el[i]
	lz := &t.lz[e.ord]
	kids := t.children(e)
	var w workspace
	var f vfunc
	switch {
	case e.fifo:
		var fns []vfunc
		for _, c := range kids {
			fns = append(fns, whole[c])
		}
		f = concatFIFO(nil, fns)
	case len(kids) == 0:
		f = vfunc{{x: 0}, {x: 1}}
	default:
		var terms []scaledChild
		for _, c := range kids {
			terms = append(terms, scaledChild{fn: whole[c], scale: t.el[c].scale})
		}
		f = slices.Clone(sumScaled(nil, terms))
	}
	var hi Share
	for r := range hi {
		if e.varies&(1<<r) != 0 {
			hi[r] = math.Inf(1)
		} else {
			hi[r] = f[0].l[r]
		}
	}
	m, _ := maxFitFactorTo(nil, &w, f, true, hi, lz.g, lz.lim)
	return m, composeTo(nil, f, m, true)
}

// The functions the engine builds on demand are the first points of those
// built at once: every pool's FairShareBySuggestion and
// MaxFitFactorBySuggestion, as far as the update built them, are prefixes
// of the whole functions, bit for bit (and whole where they are complete).
func TestPropertyOnDemandFunctionsArePrefixes(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		p := drawGenParams(rt)
		snap, prev := genSnapshot(p)
		var en Engine
		if _, err := en.Update(snap, prev); err != nil {
			rt.Fatalf("Update: %v", err)
		}
		tr := &en.t
		if bad := functionsArePrefixes(tr); bad != "" {
			rt.Fatal(bad)
		}
	})
}

// functionsArePrefixes checks that every pool's functions, as far as they
// are built (all of them when complete), are the first points of its
// whole functions built from its children's whole ones; it returns what
// is wrong, or "".
func functionsArePrefixes(tr *tree) string {
	whole := slices.Clone(tr.fnS)
	for k := len(tr.pools) - 1; k >= 0; k-- {
		i := tr.pools[k]
		e := &tr.el[i]
		lz := &tr.lz[e.ord]
		m, s := wholeFunctions(tr, whole, i)
		whole[i] = s
		gotS, gotM := tr.fnS[i][:lz.sFinal], lz.m[:lz.mFinal]
		if e.sDone {
			gotS, gotM = tr.fnS[i], tr.fnM[i]
			if len(gotS) != len(s) || len(gotM) != len(m) {
				return fmt.Sprintf("%s: complete functions have %d and %d points, the whole ones %d and %d", tr.names[i], len(gotS), len(gotM), len(s), len(m))
			}
		}
		if len(gotS) > len(s) || !slices.Equal(gotS, s[:len(gotS)]) {
			return fmt.Sprintf("%s: S built on demand is not a prefix of the whole S:\n%v\n%v", tr.names[i], gotS, s)
		}
		if len(gotM) > len(m) || !slices.Equal(gotM, m[:len(gotM)]) {
			return fmt.Sprintf("%s: M built on demand is not a prefix of the whole M:\n%v\n%v", tr.names[i], gotM, m)
		}
	}
	return ""
}
