package scheduler

import (
	"fmt"
	"math"
	"strings"
)

// ResourceType names one scheduled resource. The numeric order is the
// reference's iteration order and the index order of every vector.
type ResourceType int

// The scheduled resources, in the reference's iteration order.
const (
	UserSlots ResourceType = iota
	CPU
	GPU
	Memory
	Network
)

// NumResources is the number of resource types.
const NumResources = 5

var resourceNames = [NumResources]string{"user_slots", "cpu", "gpu", "memory", "network"}

// AllResources lists every resource type in iteration order.
var AllResources = [NumResources]ResourceType{UserSlots, CPU, GPU, Memory, Network}

// String returns the wire name of the resource ("user_slots", "cpu", ...).
func (r ResourceType) String() string {
	if r < 0 || int(r) >= NumResources {
		return fmt.Sprintf("resource(%d)", int(r))
	}
	return resourceNames[r]
}

// ParseResourceType maps a wire name to a ResourceType.
func ParseResourceType(name string) (ResourceType, error) {
	for i, n := range resourceNames {
		if n == name {
			return ResourceType(i), nil
		}
	}
	return 0, fmt.Errorf("%w: %q (want one of %s)", ErrUnknownResource, name, strings.Join(resourceNames[:], ", "))
}

// Resources is an absolute amount of every resource: slots, cores, GPUs,
// bytes of memory, network units.
type Resources [NumResources]float64

// ResourceMask is a set of resource types.
type ResourceMask uint8

// Has reports whether r is in the mask.
func (m ResourceMask) Has(r ResourceType) bool { return m&(1<<uint(r)) != 0 }

// With returns the mask with r added.
func (m ResourceMask) With(r ResourceType) ResourceMask { return m | 1<<uint(r) }

// PartialResources is a resource map in which some resources are absent.
// What an absent resource means depends on the field: 0 for guarantees and
// flows, unlimited for limits.
type PartialResources struct {
	Values Resources
	Set    ResourceMask
}

// IsEmpty reports whether no resource is set.
func (p PartialResources) IsEmpty() bool { return p.Set == 0 }

// With returns a copy with r set to v.
func (p PartialResources) With(r ResourceType, v float64) PartialResources {
	p.Values[r] = v
	p.Set = p.Set.With(r)
	return p
}

// OrZero returns the values with absent resources as 0.
func (p PartialResources) OrZero() Resources {
	var out Resources
	for r := range NumResources {
		if p.Set.Has(ResourceType(r)) {
			out[r] = p.Values[r]
		}
	}
	return out
}

// OrInfinite returns the values with absent resources as +Inf (unlimited).
func (p PartialResources) OrInfinite() Resources {
	var out Resources
	for r := range NumResources {
		if p.Set.Has(ResourceType(r)) {
			out[r] = p.Values[r]
		} else {
			out[r] = math.Inf(1)
		}
	}
	return out
}

// String formats the resources that are set, zeros included, in iteration
// order, e.g. "{cpu: 10, memory: 0}"; "{}" when none is.
func (p PartialResources) String() string {
	return formatResources(&p.Values, func(i int) bool { return p.Set.Has(ResourceType(i)) })
}

// Add returns a+b.
func (a Resources) Add(b Resources) Resources { return vadd(a, b) }

// Sub returns a-b.
func (a Resources) Sub(b Resources) Resources { return vsub(a, b) }

// Scale returns a*k.
func (a Resources) Scale(k float64) Resources { return vscale(a, k) }

// Min returns the componentwise minimum.
func (a Resources) Min(b Resources) Resources { return vmin(a, b) }

// Max returns the componentwise maximum.
func (a Resources) Max(b Resources) Resources { return vmax(a, b) }

// IsZero reports whether every component is 0.
func (a Resources) IsZero() bool { return a == Resources{} }

// Dominates reports whether a_r >= b_r for every resource.
func (a Resources) Dominates(b Resources) bool { return vdominates(a, b) }

// Round rounds every component to its representable value: the nearest
// integer, and the nearest 0.01 for cpu. The reference applies this whenever a
// resource vector is multiplied by a ratio.
func (a Resources) Round() Resources {
	for i := range a {
		if ResourceType(i) == CPU {
			a[i] = math.Round(a[i]*100) / 100
		} else {
			a[i] = math.Round(a[i])
		}
	}
	return a
}

// Truncate stores a double into resource fields: integer resources truncate
// toward zero, cpu rounds to the nearest 0.01.
func (a Resources) Truncate() Resources {
	for i := range a {
		if ResourceType(i) == CPU {
			a[i] = math.Round(a[i]*100) / 100
		} else {
			a[i] = math.Trunc(a[i])
		}
	}
	return a
}

// ShareOf returns a/total per resource, 0 where the total is 0 (no NaN, no
// infinity: an infinite amount over a positive total gives +Inf only if a is
// infinite, which callers clamp first).
func (a Resources) ShareOf(total Resources) Share {
	var s Share
	for i := range a {
		if total[i] > 0 {
			s[i] = a[i] / total[i]
		}
	}
	return s
}

// String formats the non-zero components, e.g. "{cpu: 10, memory: 1024}".
func (a Resources) String() string {
	return formatResources(&a, func(i int) bool { return a[i] != 0 })
}

// formatResources writes the values show selects as "{cpu: 10, memory: 4}".
func formatResources(v *Resources, show func(i int) bool) string {
	var b strings.Builder
	b.WriteByte('{')
	first := true
	for i, x := range v {
		if !show(i) {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		fmt.Fprintf(&b, "%s: %g", resourceNames[i], x)
	}
	b.WriteByte('}')
	return b.String()
}

// DominantResource is the resource with the largest share of the cluster total
// among resources with a positive total, scanned in iteration order with a
// strict '>' (ties go to the earlier resource); cpu when every ratio is 0.
func DominantResource(demand, total Resources) ResourceType {
	best := CPU
	bestRatio := 0.0
	for i := range NumResources {
		if total[i] <= 0 {
			continue
		}
		if ratio := demand[i] / total[i]; ratio > bestRatio {
			best, bestRatio = ResourceType(i), ratio
		}
	}
	return best
}
