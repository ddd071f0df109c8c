package scheduler

// vector is implemented by Resources and Share: both are fixed arrays of one
// value per resource, and share their componentwise arithmetic.
type vector interface {
	~[NumResources]float64
}

func vadd[V vector](a, b V) V {
	for i := range a {
		a[i] += b[i]
	}
	return a
}

func vsub[V vector](a, b V) V {
	for i := range a {
		a[i] -= b[i]
	}
	return a
}

func vscale[V vector](a V, k float64) V {
	for i := range a {
		a[i] *= k
	}
	return a
}

func vmin[V vector](a, b V) V {
	for i := range a {
		a[i] = min(a[i], b[i])
	}
	return a
}

func vmax[V vector](a, b V) V {
	for i := range a {
		a[i] = max(a[i], b[i])
	}
	return a
}

func vdominates[V vector](a, b V) bool {
	for i := range a {
		if a[i] < b[i] {
			return false
		}
	}
	return true
}
