package main

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// newOpUpdateCmd builds `op update`: run-time weight, limits and pool.
func newOpUpdateCmd(cf *clientFlags) *cobra.Command {
	var (
		weight      float64
		pool, tree  string
		user        string
		limits      string
		clearLimits bool
	)
	cmd := &cobra.Command{
		Use:   "update ID [--weight W] [--pool POOL] [--resource-limits cpu=4,memory=8Gi | --clear-resource-limits] [--tree TREE]",
		Short: "Change a running or pending operation's weight, resource limits or pool",
		Long: `Change a running or pending operation's runtime parameters. Running jobs keep running:
a new pool takes them along, lower limits stop new jobs until usage is back under them.
With --tree the change applies to that tree only (scheduling_options_per_pool_tree),
otherwise to every tree without a per-tree option.`,
		Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := updateRequest(cmd, weight, pool, tree, limits, clearLimits)
			if err != nil {
				return usageError{err}
			}
			if err := subjects.ValidateToken("operation id", args[0]); err != nil {
				return usageError{err}
			}
			if err := checkUser(user); err != nil {
				return err
			}
			return cf.with(cmd, client.RetriedDuration(cf.timeout), func(ctx context.Context, c *client.Client) error {
				st, err := asUser(c, user).Update(ctx, args[0], req)
				if err != nil {
					return err
				}
				return writeStatuses(cmd.OutOrStdout(), cf.output, st)
			})
		},
	}
	f := cmd.Flags()
	f.Float64Var(&weight, "weight", 0, "new weight (a finite number > 0)")
	f.StringVar(&pool, "pool", "", "new pool")
	f.StringVar(&limits, "resource-limits", "", "new resource limits, e.g. cpu=4,memory=8Gi (resources not named become unlimited)")
	f.BoolVar(&clearLimits, "clear-resource-limits", false, "remove the operation's resource limits")
	f.StringVar(&tree, "tree", "", "apply to this pool tree only")
	userFlag(cmd, &user, "update")
	return cmd
}

func updateRequest(cmd *cobra.Command, weight float64, pool, tree, limits string, clearLimits bool) (*pb.UpdateOperationRequest, error) {
	f := cmd.Flags()
	if !f.Changed("weight") && !f.Changed("pool") && !f.Changed("resource-limits") && !clearLimits {
		return nil, errors.New("op update: nothing to change; give --weight, --pool, --resource-limits or --clear-resource-limits")
	}
	opts := &pb.PoolTreeOptions{}
	if f.Changed("weight") {
		if math.IsNaN(weight) || math.IsInf(weight, 0) || weight <= 0 {
			return nil, fmt.Errorf("--weight: must be a finite number > 0, got %g", weight)
		}
		opts.Weight = proto.Float64(weight)
	}
	if f.Changed("pool") {
		if err := subjects.ValidateToken("--pool", pool); err != nil {
			return nil, err
		}
		opts.Pool = pool
	}
	if f.Changed("resource-limits") {
		if clearLimits {
			return nil, errors.New("--resource-limits and --clear-resource-limits exclude each other")
		}
		l, err := wire.ParseLimits(limits)
		if err != nil {
			return nil, fmt.Errorf("--resource-limits: %w", err)
		}
		opts.ResourceLimits = wire.ToLimits(l)
	}
	if tree != "" {
		if clearLimits {
			return nil, errors.New("--clear-resource-limits applies to the whole operation, not to one --tree")
		}
		if err := subjects.ValidateToken("--tree", tree); err != nil {
			return nil, err
		}
		return &pb.UpdateOperationRequest{SchedulingOptionsPerPoolTree: map[string]*pb.PoolTreeOptions{tree: opts}}, nil
	}
	return &pb.UpdateOperationRequest{Weight: opts.Weight, Pool: opts.Pool, ResourceLimits: opts.ResourceLimits, ClearResourceLimits: clearLimits}, nil
}
