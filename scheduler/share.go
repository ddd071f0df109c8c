package scheduler

// Share is a vector of fractions of the cluster total, one per resource.
type Share [NumResources]float64

// Ones returns a share of 1 in every resource whose cluster total is positive
// and 0 elsewhere (the reference's "Unit" limits of a cluster).
func Ones(total Resources) Share {
	var s Share
	for i := range s {
		if total[i] > 0 {
			s[i] = 1
		}
	}
	return s
}

// Add returns a+b.
func (a Share) Add(b Share) Share { return vadd(a, b) }

// Sub returns a-b.
func (a Share) Sub(b Share) Share { return vsub(a, b) }

// Scale returns a*k.
func (a Share) Scale(k float64) Share { return vscale(a, k) }

// AddScalar returns a+k in every component.
func (a Share) AddScalar(k float64) Share {
	for i := range a {
		a[i] += k
	}
	return a
}

// Min returns the componentwise minimum.
func (a Share) Min(b Share) Share { return vmin(a, b) }

// Max returns the componentwise maximum.
func (a Share) Max(b Share) Share { return vmax(a, b) }

// ClampZero returns max(a, 0) componentwise.
func (a Share) ClampZero() Share { return a.Max(Share{}) }

// MaxComponent is the largest component (the dominant share), 0 for an empty
// vector.
func (a Share) MaxComponent() float64 {
	m := a[0]
	for _, v := range a[1:] {
		m = max(m, v)
	}
	return m
}

// MinComponent is the smallest component.
func (a Share) MinComponent() float64 {
	m := a[0]
	for _, v := range a[1:] {
		m = min(m, v)
	}
	return m
}

// Dominates reports whether a_r >= b_r for every resource.
func (a Share) Dominates(b Share) bool { return vdominates(a, b) }

// DominatesEps reports whether a_r + eps >= b_r for every resource.
func (a Share) DominatesEps(b Share, eps float64) bool {
	for i := range a {
		if a[i]+eps < b[i] {
			return false
		}
	}
	return true
}

// Resources converts a share back to absolute amounts of total.
func (a Share) Resources(total Resources) Resources {
	var out Resources
	for i := range a {
		out[i] = a[i] * total[i]
	}
	return out
}

// IsZero reports whether every component is 0.
func (a Share) IsZero() bool { return a == Share{} }

// addTo adds b to *a in place (no vector travels by value).
func addTo(a, b *Share) {
	for k := range a {
		a[k] += b[k]
	}
}

// sumTo sets *dst to a + b.
func sumTo(dst, a, b *Share) {
	for k := range dst {
		dst[k] = a[k] + b[k]
	}
}
