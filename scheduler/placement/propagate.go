package placement

// refresh brings e and its ancestors up to date after e's usage, pending
// jobs, minPending or candidacy changed (the callers have already added the
// usage and pending deltas along the path): every key on the path is
// recomputed, heap positions fixed, candidates entered or removed, and the
// pools' minPending maintained incrementally; e is an operation, and
// noted as changed for the OperationsCopy. O(depth·log n).
func (p *Placement) refresh(e *element) {
	p.noteChanged(e)
	for c := e; c.parent != nil; c = c.parent {
		par := c.parent
		c.computeKey(&p.inv)
		was, now := c.pos >= 0, c.candidate()
		old := c.contrib
		switch {
		case now && !was:
			c.contrib = c.minPending
			par.push(c)
		case !now && was:
			par.remove(c)
		case now:
			c.contrib = c.minPending
			par.fix(c.pos)
		}
		// Maintain par.minPending: recompute when a component the old
		// contribution defined may have risen, else take the minimum.
		if was && (!now || c.contrib != old) && raisesMin(par.minPending, old, c.contrib, now) {
			par.recomputeMin()
		} else if now {
			par.minPending = par.minPending.min(c.contrib)
		}
	}
	p.root.computeKey(&p.inv)
}

// raisesMin reports whether replacing old (a contribution to the minimum m)
// by new (or by nothing when !present) may raise m.
func raisesMin(m, old, new vec, present bool) bool {
	for r := range m {
		if old[r] == m[r] && (!present || new[r] > old[r]) {
			return true
		}
	}
	return false
}
