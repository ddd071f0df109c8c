package actors

import (
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// ephemeralPool is a pool the tree created for a user's operations.
type ephemeralPool struct {
	cfg  scheduler.PoolConfig
	user string
}

// allPools are the configured pools followed by the ephemeral ones (by
// name). The slice is shared: callers must not modify it.
func (t *treeActor) allPools() []scheduler.PoolConfig {
	switch {
	case len(t.ephemeral) == 0:
		return t.spec.Pools
	case t.all == nil:
		t.all = append(slices.Clone(t.spec.Pools), t.ephemeralConfigs()...)
	}
	return t.all
}

// setEphemeral adds (or, with a nil e, removes) an ephemeral pool.
func (t *treeActor) setEphemeral(name scheduler.PoolID, e *ephemeralPool) {
	if e == nil {
		delete(t.ephemeral, name)
	} else {
		t.ephemeral[name] = *e
	}
	t.all = nil
}

func (t *treeActor) ephemeralConfigs() []scheduler.PoolConfig {
	out := make([]scheduler.PoolConfig, 0, len(t.ephemeral))
	for _, e := range t.ephemeral {
		out = append(out, e.cfg)
	}
	slices.SortFunc(out, func(a, b scheduler.PoolConfig) int { return strings.Compare(string(a.Name), string(b.Name)) })
	return out
}

// ensureEphemeral creates a user's ephemeral pool unless it exists, within
// max_ephemeral_pool_per_user.
func (t *treeActor) ensureEphemeral(ctx actor.Context, cfg scheduler.PoolConfig, user string) *pb.Error {
	if _, ok := t.ephemeral[cfg.Name]; ok || slices.ContainsFunc(t.spec.Pools, func(p scheduler.PoolConfig) bool { return p.Name == cfg.Name }) {
		return nil
	}
	limit := t.spec.MaxEphemeralPoolsPerUser
	if limit <= 0 {
		limit = 1
	}
	n := 0
	for _, e := range t.ephemeral {
		if e.user == user {
			n++
		}
	}
	if n >= limit {
		return pbErr(pb.ErrorCode_ERROR_CODE_LIMIT_EXCEEDED, "spec.pool",
			"tree %s: user %q already has %d ephemeral pools, the tree's max_ephemeral_pool_per_user", t.spec.Name, user, n)
	}
	t.setEphemeral(cfg.Name, &ephemeralPool{cfg: cfg, user: user})
	if err := t.applyPools(ctx); err != nil {
		t.setEphemeral(cfg.Name, nil)
		if rerr := t.applyPools(ctx); rerr != nil {
			panic("tree " + t.spec.Name + ": restoring pools after a refused ephemeral pool: " + rerr.Error())
		}
		return pbErr(pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, "spec.pool", "tree %s: ephemeral pool %s: %v", t.spec.Name, cfg.Name, err)
	}
	t.cfg.Logger.Info("ephemeral pool created", "tree", t.spec.Name, "pool", cfg.Name, "parent", cfg.Parent, "user", user)
	return nil
}

// dropEmptyEphemeral removes an ephemeral pool that holds no operation.
func (t *treeActor) dropEmptyEphemeral(ctx actor.Context, pool scheduler.PoolID) {
	if _, ok := t.ephemeral[pool]; !ok {
		return
	}
	if n, _ := t.adm.Counts(pool); n > 0 {
		return
	}
	t.setEphemeral(pool, nil)
	if err := t.applyPools(ctx); err != nil {
		t.cfg.Logger.Error("remove ephemeral pool", "tree", t.spec.Name, "pool", pool, "err", err)
		return
	}
	t.cfg.Logger.Info("ephemeral pool removed", "tree", t.spec.Name, "pool", pool)
}

// applyPools gives the admission, the placement and the pool actors the
// current pools (configured and ephemeral).
func (t *treeActor) applyPools(ctx actor.Context) error {
	pools := t.allPools()
	if err := t.ledger.setTree(t.spec.Config, pools); err != nil {
		return err
	}
	if _, err := t.adm.Reconfigure(t.spec.Config, pools); err != nil {
		return err
	}
	t.syncPoolActors(ctx)
	return nil
}

// DefaultUser owns operations whose spec names no user.
const DefaultUser = "anonymous"

func userOf(spec *pb.OperationSpec) string {
	if u := spec.GetUser(); u != "" {
		return u
	}
	return DefaultUser
}

// ephemeralFor resolves where an operation runs in a tree: an operation
// without a pool runs in the pool named after its user (an ephemeral pool
// under the tree's default_parent_pool unless the tree configures one by
// that name); one submitted into a pool with create_ephemeral_subpools
// runs in "<pool>$<user>". It returns the ephemeral pool to create (nil
// when the pool is configured) and the pool the operation runs in.
func ephemeralFor(tr *treeRef, spec *pb.OperationSpec, pool scheduler.PoolID, field string) (*scheduler.PoolConfig, scheduler.PoolID, *pb.Error) {
	user := userOf(spec)
	if pool == "" {
		name := scheduler.PoolID(user)
		if tr.pools[name] {
			return nil, name, nil
		}
		parent := tr.spec.Config.DefaultParentPool
		if parent != "" && !tr.pools[parent] {
			return nil, "", pbErr(pb.ErrorCode_ERROR_CODE_FAILED_PRECONDITION, field,
				"%s: tree %s: default_parent_pool %q does not exist", field, tr.spec.Name, parent)
		}
		return &scheduler.PoolConfig{Name: name, Parent: parent}, name, nil
	}
	if !tr.pools[pool] {
		return nil, "", pbErr(pb.ErrorCode_ERROR_CODE_NOT_FOUND, field, "%s: pool %q does not exist in tree %s", field, pool, tr.spec.Name)
	}
	opts := tr.spec.PoolOptions[pool]
	switch {
	case opts.CreateEphemeralSubpools:
		cfg := opts.EphemeralSubpool
		cfg.Name, cfg.Parent = pool+"$"+scheduler.PoolID(user), pool
		return &cfg, cfg.Name, nil
	case opts.ForbidImmediateOperations:
		return nil, "", pbErr(pb.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, field,
			"%s: pool %q of tree %s has forbid_immediate_operations; submit into one of its children", field, pool, tr.spec.Name)
	}
	return nil, pool, nil
}
