package scenario

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/sharetree/sharetree/scheduler"
)

// Report is the what-if report: one entry per step.
type Report struct {
	Version int          `json:"version"`
	Name    string       `json:"name,omitempty"`
	Steps   []StepReport `json:"steps"`
}

// StepReport is the state after one step's updates.
type StepReport struct {
	// Time is the time since time zero, e.g. "60s".
	Time     string   `json:"time"`
	Alerts   []Alert  `json:"alerts"`
	Elements Elements `json:"elements"`
}

// Alert is a tree-level problem or a rejected operation.
type Alert struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Elements keeps the report's elements in tree order (root, then depth-first)
// and encodes as a JSON object in that order.
type Elements []*ElementReport

// MarshalJSON writes {"<name>": {...}, ...} in slice order.
func (es Elements) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range es {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.Name)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Find returns the element with the given name.
func (es Elements) Find(name string) (*ElementReport, bool) {
	for _, e := range es {
		if e.Name == name {
			return e, true
		}
	}
	return nil, false
}

// ShareJSON is a share with every resource, encoded in resource order.
type ShareJSON scheduler.Share

// MarshalJSON writes {"user_slots": x, "cpu": y, ...}.
func (s ShareJSON) MarshalJSON() ([]byte, error) { return vectorJSON(s[:]), nil }

// ResourcesJSON is an absolute resource vector, encoded in resource order.
type ResourcesJSON scheduler.Resources

// MarshalJSON writes {"user_slots": x, "cpu": y, ...}.
func (r ResourcesJSON) MarshalJSON() ([]byte, error) { return vectorJSON(r[:]), nil }

func vectorJSON(v []float64) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(scheduler.ResourceType(i).String())
		b.WriteString(`":`)
		b.WriteString(number(x))
	}
	b.WriteByte('}')
	return b.Bytes()
}

// number formats a float as a JSON number; values that JSON cannot hold
// (never produced by the engine for reported shares) become 0.
func number(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "0"
	}
	if x == 0 {
		return "0" // no "-0"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// DetailedJSON is a fair share split into its parts.
type DetailedJSON struct {
	StrongGuarantee    ShareJSON `json:"strong_guarantee"`
	IntegralGuarantee  ShareJSON `json:"integral_guarantee"`
	WeightProportional ShareJSON `json:"weight_proportional"`
	Total              ShareJSON `json:"total"`
}

// ElementReport is one element's attributes, named as in the scenario format.
// Pointer fields are omitted where they do not apply to the element's kind.
type ElementReport struct {
	Name   string `json:"-"`
	Kind   string `json:"kind"`
	Parent string `json:"parent,omitempty"`

	DemandShare          ShareJSON    `json:"demand_share"`
	UsageShare           ShareJSON    `json:"usage_share"`
	LimitsShare          ShareJSON    `json:"limits_share"`
	StrongGuaranteeShare ShareJSON    `json:"strong_guarantee_share"`
	FairShare            DetailedJSON `json:"fair_share"`
	LimitedDemandShare   ShareJSON    `json:"limited_demand_share"`
	DominantResource     string       `json:"dominant_resource"`
	Weight               *float64     `json:"weight,omitempty"`

	ResourceDemand                    ResourcesJSON  `json:"resource_demand"`
	ResourceUsage                     ResourcesJSON  `json:"resource_usage"`
	ResourceLimits                    ResourcesJSON  `json:"resource_limits"`
	EffectiveStrongGuaranteeResources *ResourcesJSON `json:"effective_strong_guarantee_resources,omitempty"`

	Status                                *string  `json:"status,omitempty"`
	StarvationStatus                      *string  `json:"starvation_status,omitempty"`
	EffectiveFairShareStarvationTolerance *float64 `json:"effective_fair_share_starvation_tolerance,omitempty"`
	Satisfaction                          *float64 `json:"satisfaction,omitempty"`

	AccumulatedResourceVolume          *ResourcesJSON `json:"accumulated_resource_volume,omitempty"`
	AccumulatedResourceRatioVolume     *float64       `json:"accumulated_resource_ratio_volume,omitempty"`
	IntegralPoolCapacity               *ResourcesJSON `json:"integral_pool_capacity,omitempty"`
	SpecifiedBurstRatio                *float64       `json:"specified_burst_ratio,omitempty"`
	SpecifiedResourceFlowRatio         *float64       `json:"specified_resource_flow_ratio,omitempty"`
	TotalBurstRatio                    *float64       `json:"total_burst_ratio,omitempty"`
	TotalResourceFlowRatio             *float64       `json:"total_resource_flow_ratio,omitempty"`
	EstimatedBurstUsageDurationSeconds *float64       `json:"estimated_burst_usage_duration_seconds,omitempty"`

	OperationCount        *int `json:"operation_count,omitempty"`
	RunningOperationCount *int `json:"running_operation_count,omitempty"`
	// The live scheduler's orchid also reports these (the what-if report
	// leaves them out).
	LightweightRunningOperationCount *int `json:"lightweight_running_operation_count,omitempty"`
	MaxOperationCount                *int `json:"max_operation_count,omitempty"`
	MaxRunningOperationCount         *int `json:"max_running_operation_count,omitempty"`

	State         *string `json:"state,omitempty"`
	PendingReason *string `json:"pending_reason,omitempty"`
	QueuePosition *int    `json:"queue_position,omitempty"`
	FifoIndex     *int    `json:"fifo_index,omitempty"`
	// Lightweight: a running operation runs as a lightweight operation
	// (orchid only).
	Lightweight *bool `json:"lightweight,omitempty"`

	NonPreemptibleJobCount          *int `json:"non_preemptible_job_count,omitempty"`
	AggressivelyPreemptibleJobCount *int `json:"aggressively_preemptible_job_count,omitempty"`
	PreemptibleJobCount             *int `json:"preemptible_job_count,omitempty"`
}

func valuePtr[T any](v T) *T { return &v }

// finitePtr returns nil for values JSON cannot hold.
func finitePtr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// ElementReportOf is the report of one element of a fair-share result, with
// the attribute names of the what-if report; counts, pending state and the
// orchid's extra attributes are left for the caller.
func ElementReportOf(e *scheduler.ElementResult) *ElementReport { return elementReport(e) }

func elementReport(e *scheduler.ElementResult) *ElementReport {
	r := &ElementReport{
		Name:                 e.Name,
		Kind:                 e.Kind.String(),
		Parent:               e.Parent,
		DemandShare:          ShareJSON(e.DemandShare),
		UsageShare:           ShareJSON(e.UsageShare),
		LimitsShare:          ShareJSON(e.LimitsShare),
		StrongGuaranteeShare: ShareJSON(e.StrongGuaranteeShare),
		FairShare: DetailedJSON{
			StrongGuarantee:    ShareJSON(e.FairShare.StrongGuarantee),
			IntegralGuarantee:  ShareJSON(e.FairShare.IntegralGuarantee),
			WeightProportional: ShareJSON(e.FairShare.WeightProportional),
			Total:              ShareJSON(e.FairShare.Total),
		},
		LimitedDemandShare: ShareJSON(e.LimitedDemandShare),
		DominantResource:   e.DominantResource.String(),
		ResourceDemand:     ResourcesJSON(e.ResourceDemand),
		ResourceUsage:      ResourcesJSON(e.ResourceUsage),
		ResourceLimits:     ResourcesJSON(e.ResourceLimits),
	}
	if e.Kind != scheduler.KindRoot {
		r.Weight = valuePtr(e.Weight)
		r.Status = valuePtr(e.Status.String())
		r.StarvationStatus = valuePtr(e.StarvationStatus.String())
		r.EffectiveFairShareStarvationTolerance = valuePtr(e.EffectiveFairShareStarvationTolerance)
		r.Satisfaction = finitePtr(e.Satisfaction)
	}
	if e.Kind != scheduler.KindOperation {
		r.EffectiveStrongGuaranteeResources = valuePtr(ResourcesJSON(e.EffectiveStrongGuaranteeResources))
		r.TotalBurstRatio = valuePtr(e.TotalBurstRatio)
		r.TotalResourceFlowRatio = valuePtr(e.TotalResourceFlowRatio)
	}
	if ig := e.Integral; ig != nil {
		r.AccumulatedResourceVolume = valuePtr(ResourcesJSON(ig.AccumulatedResourceVolume))
		r.AccumulatedResourceRatioVolume = valuePtr(ig.AccumulatedResourceRatioVolume)
		r.IntegralPoolCapacity = valuePtr(ResourcesJSON(ig.IntegralPoolCapacity))
		r.SpecifiedBurstRatio = valuePtr(ig.SpecifiedBurstRatio)
		r.SpecifiedResourceFlowRatio = valuePtr(ig.SpecifiedResourceFlowRatio)
		if ig.EstimatedBurstUsageDurationSeconds != nil {
			r.EstimatedBurstUsageDurationSeconds = valuePtr(*ig.EstimatedBurstUsageDurationSeconds)
		}
	}
	if e.Kind == scheduler.KindOperation {
		r.State = valuePtr(scheduler.AdmissionRunning.String())
		r.FifoIndex = valuePtr(e.FifoIndex)
		if len(e.Jobs) > 0 {
			r.NonPreemptibleJobCount = valuePtr(e.NonPreemptibleJobCount)
			r.AggressivelyPreemptibleJobCount = valuePtr(e.AggressivelyPreemptibleJobCount)
			r.PreemptibleJobCount = valuePtr(e.PreemptibleJobCount)
		}
	}
	return r
}
