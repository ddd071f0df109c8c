package wire

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// ErrInvalid is wrapped by every conversion or parse error.
var ErrInvalid = errors.New("wire: invalid value")

// Resources converts a wire vector; nil is zero. field names the vector in
// errors ("spec.tasks[0].job_resources").
func Resources(field string, r *pb.Resources) (scheduler.Resources, error) {
	var out scheduler.Resources
	if r == nil {
		return out, nil
	}
	out = scheduler.Resources{r.GetUserSlots(), r.GetCpu(), r.GetGpu(), r.GetMemory(), r.GetNetwork()}
	for i, v := range out {
		if !scheduler.ValidAmount(v) {
			return scheduler.Resources{}, fmt.Errorf("%w: %s.%s %s, got %g", ErrInvalid, field, scheduler.ResourceType(i), scheduler.AmountRule, v)
		}
	}
	return out, nil
}

// ToResources converts an engine vector to the wire.
func ToResources(r scheduler.Resources) *pb.Resources {
	return &pb.Resources{
		UserSlots: r[scheduler.UserSlots], Cpu: r[scheduler.CPU], Gpu: r[scheduler.GPU],
		Memory: r[scheduler.Memory], Network: r[scheduler.Network],
	}
}

// Limits converts a wire partial vector; nil has nothing set.
func Limits(field string, l *pb.ResourceLimits) (scheduler.PartialResources, error) {
	var out scheduler.PartialResources
	if l == nil {
		return out, nil
	}
	set := [scheduler.NumResources]*float64{l.UserSlots, l.Cpu, l.Gpu, l.Memory, l.Network}
	for i, p := range set {
		if p == nil {
			continue
		}
		if v := *p; !scheduler.ValidAmount(v) {
			return scheduler.PartialResources{}, fmt.Errorf("%w: %s.%s %s, got %g", ErrInvalid, field, scheduler.ResourceType(i), scheduler.AmountRule, v)
		}
		out = out.With(scheduler.ResourceType(i), *p)
	}
	return out, nil
}

// ToLimits converts an engine partial vector to the wire.
func ToLimits(p scheduler.PartialResources) *pb.ResourceLimits {
	if p.IsEmpty() {
		return nil
	}
	out := &pb.ResourceLimits{}
	ptrs := [scheduler.NumResources]**float64{&out.UserSlots, &out.Cpu, &out.Gpu, &out.Memory, &out.Network}
	for i, pp := range ptrs {
		if p.Set.Has(scheduler.ResourceType(i)) {
			v := p.Values[i]
			*pp = &v
		}
	}
	return out
}

// ParseResources parses "cpu=8,memory=16Gi,user_slots=8": comma-separated
// name=amount pairs, names from the engine's resource types, amounts plain
// numbers or with a binary (Ki, Mi, Gi, Ti) or decimal (K, M, G, T) suffix.
// Each resource may appear once.
func ParseResources(s string) (scheduler.Resources, error) {
	p, err := ParseLimits(s)
	return p.Values, err
}

// ParseLimits parses the same syntax as ParseResources into a partial
// vector: the resources named are set, the others absent (unlimited). An
// error quotes the whole input and the item at fault.
func ParseLimits(s string) (scheduler.PartialResources, error) {
	var out scheduler.PartialResources
	var seen scheduler.ResourceMask
	if strings.TrimSpace(s) == "" {
		return out, fmt.Errorf("%w: resources %q: empty; want name=amount pairs such as cpu=8,memory=16Gi", ErrInvalid, s)
	}
	for _, item := range strings.Split(s, ",") {
		name, amount, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return out, fmt.Errorf("%w: resources %q: item %q: want name=amount", ErrInvalid, s, item)
		}
		r, err := scheduler.ParseResourceType(strings.TrimSpace(name))
		if err != nil {
			return out, fmt.Errorf("%w: resources %q: item %q: %w", ErrInvalid, s, item, err)
		}
		if seen.Has(r) {
			return out, fmt.Errorf("%w: resources %q: item %q: %s given twice", ErrInvalid, s, item, r)
		}
		v, err := ParseAmount(strings.TrimSpace(amount))
		if err != nil {
			return out, fmt.Errorf("%w: resources %q: item %q: %w", ErrInvalid, s, item, err)
		}
		seen = seen.With(r)
		out = out.With(r, v)
	}
	return out, nil
}

var suffixes = []struct {
	s string
	m float64
}{
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
	{"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
}

// ParseAmount parses one resource amount: a number with an optional suffix
// Ki, Mi, Gi, Ti, K, M, G or T whose value the engine accepts (0 or a
// number in [scheduler.MinAmount, scheduler.MaxAmount]).
func ParseAmount(s string) (float64, error) {
	mult := 1.0
	num := s
	for _, sf := range suffixes {
		if strings.HasSuffix(s, sf.s) {
			num, mult = strings.TrimSuffix(s, sf.s), sf.m
			break
		}
	}
	// decimal(num) leaves out "inf", "nan" and hex; ParseFloat fails on
	// numbers past float64's range.
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || !decimal(num) {
		return 0, fmt.Errorf("%w: amount %q: want a finite number >= 0 with an optional suffix Ki, Mi, Gi, Ti, K, M, G or T", ErrInvalid, s)
	}
	a := float64(v*mult) + 0 // + 0: "-0" is 0
	if !scheduler.ValidAmount(a) {
		// (A finite number times its suffix can also overflow: "1e308T".)
		return 0, fmt.Errorf("%w: amount %q is %g: it %s", ErrInvalid, s, a, scheduler.AmountRule)
	}
	return a, nil
}

// decimal reports whether s is spelled with decimal digits, a point, an
// exponent and signs only, as scenario files spell amounts (ParseFloat
// also reads hex, "0x10", and underscores, "1_000").
func decimal(s string) bool {
	return strings.Trim(s, "0123456789.eE+-") == ""
}
