package actors

import (
	"fmt"

	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// treeOpts are an operation's effective options in one tree: the per-tree
// options where set, else the operation's own.
type treeOpts struct {
	pool scheduler.PoolID
	// poolField names where the pool came from, for errors.
	poolField string
	// weight: nil is 1.
	weight *float64
	limits scheduler.PartialResources
}

func treeOptions(spec *pb.OperationSpec, tree string) (treeOpts, *pb.Error) {
	o := spec.GetSchedulingOptionsPerPoolTree()[tree]
	out := treeOpts{pool: scheduler.PoolID(spec.GetPool()), poolField: "spec.pool", weight: spec.Weight}
	if o.GetPool() != "" {
		out.pool, out.poolField = scheduler.PoolID(o.GetPool()), fmt.Sprintf("spec.scheduling_options_per_pool_tree[%s].pool", tree)
	}
	if o != nil && o.Weight != nil {
		out.weight = o.Weight
	}
	limitsPB, field := spec.GetResourceLimits(), "spec.resource_limits"
	if o.GetResourceLimits() != nil {
		limitsPB, field = o.GetResourceLimits(), fmt.Sprintf("spec.scheduling_options_per_pool_tree[%s].resource_limits", tree)
	}
	limits, err := wire.Limits(field, limitsPB)
	if err != nil {
		return treeOpts{}, pbErr(pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, field, "%v", err)
	}
	out.limits = limits
	return out, nil
}
