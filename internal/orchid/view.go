package orchid

import (
	"fmt"
	"slices"
	"time"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/scheduler"
)

// TreeView is the orchid's document of one tree: its pools (the root
// first, then depth-first as in the what-if report) and its admitted
// operations (by id), each with the report's attributes.
type TreeView struct {
	Tree string `json:"tree"`
	// UpdateTime is the time of the fair-share update the shares come
	// from (RFC 3339); empty before the first update.
	UpdateTime string `json:"update_time,omitempty"`
	// Reviving: that update was computed while a new leader still waited
	// for its nodes to report their jobs (actors.TreeIntrospection.Reviving):
	// usage may be too low.
	Reviving bool `json:"reviving,omitempty"`
	// ResourceTotal is the cluster total the shares are fractions of.
	ResourceTotal scenario.ResourcesJSON `json:"resource_total"`
	Alerts        []scenario.Alert       `json:"alerts"`
	Pools         scenario.Elements      `json:"pools"`
	Operations    scenario.Elements      `json:"operations"`
}

// TreeSummary is one line of the tree list.
type TreeSummary struct {
	Tree                             string `json:"tree"`
	UpdateTime                       string `json:"update_time,omitempty"`
	Reviving                         bool   `json:"reviving,omitempty"` // as TreeView's
	PoolCount                        int    `json:"pool_count"`
	OperationCount                   int    `json:"operation_count"`
	RunningOperationCount            int    `json:"running_operation_count"`
	LightweightRunningOperationCount int    `json:"lightweight_running_operation_count"`
	PendingOperationCount            int    `json:"pending_operation_count"`
	// Error says why the tree could not be read (the others still are).
	Error string `json:"error,omitempty"`
}

// TreeList is the document of the live trees, in configuration order.
type TreeList struct {
	Trees []TreeSummary `json:"trees"`
}

func updateTime(r *scheduler.Result) string {
	if r == nil || r.Now.IsZero() {
		return ""
	}
	return r.Now.UTC().Format(time.RFC3339Nano)
}

// BuildTree turns a tree actor's snapshot into the orchid's document.
// Pools are in the result's order; pools the last update has not seen yet
// (created since) follow in configuration order with zero shares.
// Operations are in the snapshot's (id) order: running operations the
// update saw carry its attributes, the others (pending, or admitted since)
// their demand and no share.
func BuildTree(in *actors.TreeIntrospection) *TreeView {
	v := &TreeView{Tree: in.Tree, UpdateTime: updateTime(in.Result), Reviving: in.Reviving, Alerts: []scenario.Alert{}}
	pools := map[string]*scheduler.ElementResult{}
	ops := map[string]*scheduler.ElementResult{}
	var order []string
	if r := in.Result; r != nil {
		v.ResourceTotal = scenario.ResourcesJSON(r.Total)
		for _, a := range r.Alerts {
			v.Alerts = append(v.Alerts, scenario.Alert{Code: string(a.Code), Message: a.Message})
		}
		for i := range r.Elements {
			e := &r.Elements[i]
			if e.Kind == scheduler.KindOperation {
				ops[e.Name] = e
				continue
			}
			pools[e.Name] = e
			order = append(order, e.Name)
		}
	}
	counts := map[string]actors.PoolIntrospection{}
	for _, p := range in.Pools {
		counts[p.Name] = p
	}
	seen := map[string]bool{}
	for _, name := range order {
		if p, ok := counts[name]; ok {
			seen[name] = true
			v.Pools = append(v.Pools, poolReport(scenario.ElementReportOf(pools[name]), p.Counts))
		}
	}
	for _, p := range in.Pools {
		if !seen[p.Name] {
			v.Pools = append(v.Pools, unseenPoolReport(p))
		}
	}
	for _, op := range in.Operations {
		v.Operations = append(v.Operations, operationReport(op, ops[string(op.ID)], scheduler.Resources(v.ResourceTotal)))
	}
	if v.Pools == nil {
		v.Pools = scenario.Elements{}
	}
	if v.Operations == nil {
		v.Operations = scenario.Elements{}
	}
	return v
}

func poolReport(er *scenario.ElementReport, c scheduler.PoolCounts) *scenario.ElementReport {
	er.OperationCount, er.RunningOperationCount = ptr(c.Operations), ptr(c.Running)
	er.LightweightRunningOperationCount = ptr(c.LightweightRunning)
	er.MaxOperationCount, er.MaxRunningOperationCount = ptr(c.MaxOperations), ptr(c.MaxRunning)
	return er
}

// unseenPoolReport describes a pool the latest update has not seen: its
// name, kind, parent and counts.
func unseenPoolReport(p actors.PoolIntrospection) *scenario.ElementReport {
	kind := scheduler.KindPool
	if p.Name == scheduler.RootID {
		kind = scheduler.KindRoot
	}
	return poolReport(&scenario.ElementReport{Name: p.Name, Kind: kind.String(), Parent: p.Parent}, p.Counts)
}

// operationReport describes one admitted operation; e is its element in
// the latest result (nil when the update did not see it).
func operationReport(op actors.OperationIntrospection, e *scheduler.ElementResult, total scheduler.Resources) *scenario.ElementReport {
	var er *scenario.ElementReport
	if e != nil && op.Admission.State == scheduler.AdmissionRunning {
		er = scenario.ElementReportOf(e)
	} else {
		er = scenario.OperationReportOf(scheduler.Operation{
			ID: op.ID, Pool: op.Pool, Weight: op.Weight, Demand: op.SpecDemand, ResourceLimits: op.ResourceLimits,
		}, op.Admission, total)
	}
	if op.Admission.State == scheduler.AdmissionRunning {
		er.Lightweight = ptr(op.Admission.Lightweight)
	}
	return er
}

func ptr[T any](v T) *T { return &v }

// BuildPool describes one pool (scheduler.RootID: the root) of a snapshot
// alone, as BuildTree would.
func BuildPool(in *actors.TreeIntrospection, name string) (*scenario.ElementReport, error) {
	i := slices.IndexFunc(in.Pools, func(p actors.PoolIntrospection) bool { return p.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("%w: tree %s has no pool %q", ErrUnknownPool, in.Tree, name)
	}
	p := in.Pools[i]
	if e := element(in.Result, name, false); e != nil {
		return poolReport(scenario.ElementReportOf(e), p.Counts), nil
	}
	return unseenPoolReport(p), nil
}

// BuildOperation describes one admitted operation of a snapshot alone, as
// BuildTree would.
func BuildOperation(in *actors.TreeIntrospection, id string) (*scenario.ElementReport, error) {
	i := slices.IndexFunc(in.Operations, func(op actors.OperationIntrospection) bool { return string(op.ID) == id })
	if i < 0 {
		return nil, fmt.Errorf("%w: tree %s has no operation %q (finished operations leave the orchid)", ErrUnknownOperation, in.Tree, id)
	}
	var total scheduler.Resources
	if in.Result != nil {
		total = in.Result.Total
	}
	return operationReport(in.Operations[i], element(in.Result, id, true), total), nil
}

// element finds a pool's or an operation's result (nil when the update did
// not see it). Names in a Result are unique: the engine refuses an
// operation named like a pool.
func element(r *scheduler.Result, name string, operation bool) *scheduler.ElementResult {
	if r == nil {
		return nil
	}
	if e, ok := r.Element(name); ok && (e.Kind == scheduler.KindOperation) == operation {
		return e
	}
	return nil
}

// Pool returns one pool's (or the root's, scheduler.RootID) report.
func (v *TreeView) Pool(name string) (*scenario.ElementReport, error) {
	if e, ok := v.Pools.Find(name); ok {
		return e, nil
	}
	return nil, fmt.Errorf("%w: tree %s has no pool %q", ErrUnknownPool, v.Tree, name)
}

// Operation returns one operation's report.
func (v *TreeView) Operation(id string) (*scenario.ElementReport, error) {
	if e, ok := v.Operations.Find(id); ok {
		return e, nil
	}
	return nil, fmt.Errorf("%w: tree %s has no operation %q (finished operations leave the orchid)", ErrUnknownOperation, v.Tree, id)
}
