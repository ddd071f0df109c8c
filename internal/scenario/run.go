package scenario

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/sharetree/sharetree/scheduler"
)

// TimeZero is the scenario's time zero: start_time offsets and step times
// count from it.
var TimeZero = time.Unix(0, 0).UTC()

// RunFile parses the scenario at path and runs it. It is the code path of
// `sharetree fairshare -f FILE`.
func RunFile(path string) (*Report, error) {
	f, err := ParseFile(path)
	if err != nil {
		return nil, err
	}
	return Run(f)
}

// Run runs every step of a parsed scenario: it applies the step's
// configuration, removes and adds operations through the operation-count
// admission (rejected operations become alerts, pending ones take no share),
// runs the step's fair-share updates on the engine and reports the state after
// the last one.
func Run(f *File) (*Report, error) {
	rep := &Report{Version: 1, Name: f.Name}
	var state scheduler.State
	now := TimeZero
	var adm *scheduler.Admission
	rejected := map[scheduler.OperationID]bool{}
	for si, step := range f.Steps {
		var alerts []Alert
		pools := make([]scheduler.PoolConfig, len(step.Pools))
		for i, p := range step.Pools {
			pools[i] = p.Config
		}
		if adm == nil {
			var err error
			if adm, err = scheduler.NewAdmission(step.Tree, pools); err != nil {
				return nil, stepError(f, si, err)
			}
		} else if _, err := adm.Reconfigure(step.Tree, pools); err != nil {
			return nil, stepError(f, si, err)
		}
		for _, p := range step.Pools {
			if p.AccumulatedResourceVolume == nil {
				continue
			}
			if state.Pools == nil {
				state.Pools = map[scheduler.PoolID]scheduler.PoolState{}
			}
			ps := state.Pools[p.Config.Name]
			ps.AccumulatedVolume = *p.AccumulatedResourceVolume
			state.Pools[p.Config.Name] = ps
		}
		for _, id := range step.RemoveOperations {
			if rejected[id] {
				delete(rejected, id)
				continue
			}
			if _, err := adm.Remove(id); err != nil {
				return nil, stepError(f, si, err)
			}
		}
		for _, op := range step.AddOperations {
			if _, err := adm.Add(op.Spec.ID, op.Spec.Pool); err != nil {
				var le *scheduler.LimitError
				if !errors.As(err, &le) {
					return nil, stepError(f, si, err)
				}
				rejected[op.Spec.ID] = true
				alerts = append(alerts, Alert{Code: "operation_rejected", Message: le.Error()})
			}
		}
		var running []scheduler.Operation
		for _, op := range step.Operations {
			if info, ok := adm.Info(op.Spec.ID); ok && info.State == scheduler.AdmissionRunning {
				running = append(running, op.Spec)
			}
		}
		repeat := max(step.Update.Repeat, 1)
		var res *scheduler.Result
		for k := range repeat {
			if step.Update.HasElapsed {
				if state.LastUpdate.IsZero() && k == 0 && si == 0 {
					state.LastUpdate = now
				}
				now = now.Add(step.Update.Elapsed)
			}
			snap := &scheduler.Snapshot{Now: now, Cluster: f.Cluster, Tree: step.Tree, Pools: pools, Operations: running}
			var err error
			if res, err = scheduler.Update(snap, &state); err != nil {
				return nil, stepError(f, si, err)
			}
			state = res.State
		}
		sr := StepReport{Time: formatSeconds(now.Sub(TimeZero)), Alerts: alerts}
		for _, a := range res.Alerts {
			sr.Alerts = append(sr.Alerts, Alert{Code: string(a.Code), Message: a.Message})
		}
		if sr.Alerts == nil {
			sr.Alerts = []Alert{}
		}
		for i := range res.Elements {
			e := &res.Elements[i]
			er := elementReport(e)
			if e.Kind != scheduler.KindOperation {
				ops, run := adm.Counts(scheduler.PoolID(poolOf(e)))
				er.OperationCount, er.RunningOperationCount = valuePtr(ops), valuePtr(run)
			}
			sr.Elements = append(sr.Elements, er)
		}
		for _, op := range step.Operations {
			info, ok := adm.Info(op.Spec.ID)
			if !ok || info.State != scheduler.AdmissionPending {
				continue
			}
			sr.Elements = append(sr.Elements, pendingReport(op.Spec, info, f.Cluster.Total))
		}
		rep.Steps = append(rep.Steps, sr)
	}
	return rep, nil
}

func poolOf(e *scheduler.ElementResult) string {
	if e.Kind == scheduler.KindRoot {
		return ""
	}
	return e.Name
}

// OperationReportOf describes an operation that is not in a fair-share
// result: one that waits for a running slot, or one admitted since the
// last update. It has demand but no share yet; total is the cluster total
// the shares are fractions of.
func OperationReportOf(op scheduler.Operation, info scheduler.AdmissionInfo, total scheduler.Resources) *ElementReport {
	return pendingReport(op, info, total)
}

// pendingReport describes an operation that waits for a running slot: it has
// demand but no share.
func pendingReport(op scheduler.Operation, info scheduler.AdmissionInfo, total scheduler.Resources) *ElementReport {
	parent := string(op.Pool)
	if parent == "" {
		parent = scheduler.RootID
	}
	demand := op.Demand.Max(op.Usage)
	w := 1.0
	if op.Weight != nil {
		w = *op.Weight
	}
	r := &ElementReport{
		Name:             string(op.ID),
		Kind:             scheduler.KindOperation.String(),
		Parent:           parent,
		DemandShare:      ShareJSON(demand.ShareOf(total)),
		UsageShare:       ShareJSON(op.Usage.ShareOf(total)),
		LimitsShare:      ShareJSON(op.ResourceLimits.OrInfinite().Min(total).ShareOf(total)),
		DominantResource: scheduler.DominantResource(demand, total).String(),
		Weight:           &w,
		ResourceDemand:   ResourcesJSON(demand),
		ResourceUsage:    ResourcesJSON(op.Usage),
		ResourceLimits:   ResourcesJSON(op.ResourceLimits.OrInfinite().Min(total)),
		Status:           valuePtr(scheduler.StatusNormal.String()),
		StarvationStatus: valuePtr(scheduler.NonStarving.String()),
		State:            valuePtr(info.State.String()),
	}
	if info.State == scheduler.AdmissionPending {
		r.PendingReason, r.QueuePosition = valuePtr(info.PendingReason), valuePtr(info.QueuePosition)
	}
	return r
}

// stepError reports a failure while running step i. Configuration the
// engine refuses (a rule the parser does not check on its own; the parser
// checks every rule it knows of, with the path to the key) is bad input: an
// *Error naming the step. Anything else is an internal failure.
func stepError(f *File, step int, err error) error {
	for _, bad := range []error{scheduler.ErrInvalidConfig, scheduler.ErrInvalidTree, scheduler.ErrInvalidOperation,
		scheduler.ErrDuplicateOperation, scheduler.ErrUnknownOperation, scheduler.ErrUnknownResource} {
		if errors.Is(err, bad) {
			path := fmt.Sprintf("steps[%d]", step)
			if len(f.Steps) == 1 {
				path = ""
			}
			return &Error{File: f.Path, Path: path, Msg: causeText(err, bad)}
		}
	}
	return fmt.Errorf("%s: step %d: %w", f.Path, step, err)
}

// formatSeconds formats a duration as seconds, e.g. "60s", "0.5s".
func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}
