package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// ErrBadTreeState is wrapped by every error about a stored tree state that
// cannot be used: a malformed key, an undecodable value, a value for
// another tree, a pool listed twice or a volume the engine would refuse.
var ErrBadTreeState = errors.New("server: bad stored tree state")

// kvState keeps each tree's fair-share state (actors.StateStore) in the
// scheduler bucket, one key per tree (subjects.TreeStateKey).
type kvState struct {
	kv jetstream.KeyValue
	// fence conditions the writes on this leader still being the newest
	// (nil: unconditioned, for tests of the store alone).
	fence *fence
	// health learns each state write's outcome (nil: nothing does).
	health *storageHealth
}

// PutTreeState implements actors.StateStore.
func (s *kvState) PutTreeState(ctx context.Context, st *pb.TreeState) error {
	key, err := subjects.TreeStateKey(st.GetTree())
	if err != nil {
		return err
	}
	err = putMessage(ctx, s.kv, s.fence, subjects.SchedulerBucket, key, st)
	s.health.observe(storeState, err)
	return err
}

// DeleteTreeState implements actors.StateStore.
func (s *kvState) DeleteTreeState(ctx context.Context, tree string) error {
	key, err := subjects.TreeStateKey(tree)
	if err != nil {
		return err
	}
	return deleteKey(ctx, s.kv, s.fence, subjects.SchedulerBucket, key)
}

// dropUnconfigured deletes the stored states of the trees the
// configuration does not list (removed while the scheduler was down),
// whether or not they could be used, and removes them from persisted. A
// tree the configuration lists, even one whose configuration breaks a rule
// (it may be mended and start later), keeps its state. Failures are
// logged: the state stays until the next start.
func (s *kvState) dropUnconfigured(ctx context.Context, persisted map[string]map[scheduler.PoolID]scheduler.Resources, configured map[string]bool, logger *slog.Logger) {
	lister, err := s.kv.ListKeysFiltered(ctx, subjects.TreeStateKeys)
	if err != nil {
		logger.Warn("stored states of trees no longer configured not listed; they stay until the next start", "err", err)
		return
	}
	for _, key := range sortedKeys(lister) {
		tree, err := subjects.ParseTreeStateKey(key)
		if err != nil || configured[tree] {
			continue // (a malformed key names no tree; Load logged it)
		}
		delete(persisted, tree)
		if err := s.DeleteTreeState(ctx, tree); err != nil {
			logger.Warn("stored state of a tree no longer configured not deleted", "tree", tree, "err", err)
			continue
		}
		logger.Info("stored state of a tree no longer configured deleted", "tree", tree)
	}
}

// loadTrees reads the stored volumes of the named trees only (see Load);
// a tree with none, or whose state cannot be read or used (logged), is not
// in the result.
func (s *kvState) loadTrees(ctx context.Context, trees []string, logger *slog.Logger) map[string]map[scheduler.PoolID]scheduler.Resources {
	out := map[string]map[scheduler.PoolID]scheduler.Resources{}
	for _, tree := range trees {
		key, err := subjects.TreeStateKey(tree)
		if err != nil {
			continue // no state can be stored under such a name
		}
		vols, err := s.load(ctx, key, logger)
		if err != nil {
			logger.Warn("stored tree state not read; the tree starts from the trees file's volumes", "tree", tree, "err", err)
			continue
		}
		if vols != nil {
			out[tree] = vols
		}
	}
	return out
}

// Load reads every tree's stored volumes, by tree name. A key that cannot
// be used is logged (naming the key and what is wrong) and left out: its
// tree starts from the volumes of the trees file, as on a first start. An
// error is returned only when the bucket cannot be read.
func (s *kvState) Load(ctx context.Context, logger *slog.Logger) (map[string]map[scheduler.PoolID]scheduler.Resources, error) {
	lister, err := s.kv.ListKeysFiltered(ctx, subjects.TreeStateKeys)
	if err != nil {
		return nil, fmt.Errorf("list tree states: %w", err)
	}
	out := map[string]map[scheduler.PoolID]scheduler.Resources{}
	for _, key := range sortedKeys(lister) {
		vols, err := s.load(ctx, key, logger)
		if err != nil {
			return nil, err
		}
		if vols != nil {
			tree, _ := subjects.ParseTreeStateKey(key) // load checked it
			out[tree] = vols
		}
	}
	return out, nil
}

// load reads the state stored under key: nil when there is none, or when
// it cannot be used (logged, naming the key and what is wrong); an error
// only when the bucket cannot be read.
func (s *kvState) load(ctx context.Context, key string, logger *slog.Logger) (map[scheduler.PoolID]scheduler.Resources, error) {
	e, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	_, vols, err := decodeTreeState(key, e.Value())
	if err != nil {
		logger.Warn("stored tree state ignored; the tree starts from the trees file's volumes", "err", err)
		return nil, nil
	}
	return vols, nil
}

// decodeTreeState checks and converts the value stored under key.
func decodeTreeState(key string, data []byte) (string, map[scheduler.PoolID]scheduler.Resources, error) {
	tree, err := subjects.ParseTreeStateKey(key)
	if err != nil {
		return "", nil, fmt.Errorf("%w: %w", ErrBadTreeState, err)
	}
	bad := func(format string, args ...any) (string, map[scheduler.PoolID]scheduler.Resources, error) {
		return "", nil, fmt.Errorf("%w: %s: %s", ErrBadTreeState, key, fmt.Sprintf(format, args...))
	}
	st := &pb.TreeState{}
	if err := proto.Unmarshal(data, st); err != nil {
		return bad("not a TreeState: %v", err)
	}
	if st.GetTree() != tree {
		return bad("holds the state of tree %q", st.GetTree())
	}
	vols := make(map[scheduler.PoolID]scheduler.Resources, len(st.GetPools()))
	for i, p := range st.GetPools() {
		if err := subjects.ValidateToken("pool name", p.GetPool()); err != nil {
			return bad("pools[%d]: %v", i, err)
		}
		name := scheduler.PoolID(p.GetPool())
		if _, dup := vols[name]; dup {
			return bad("pools[%d]: pool %q is listed twice", i, name)
		}
		v := p.GetAccumulatedVolume()
		r := scheduler.Resources{v.GetUserSlots(), v.GetCpu(), v.GetGpu(), v.GetMemory(), v.GetNetwork()}
		for k, x := range r {
			if !scheduler.ValidVolume(x) {
				return bad("pools[%d] (%s).accumulated_volume.%s %s, got %g", i, name, scheduler.ResourceType(k), scheduler.VolumeRule, x)
			}
		}
		vols[name] = r
	}
	return tree, vols, nil
}
