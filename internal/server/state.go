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
type kvState struct{ kv jetstream.KeyValue }

// PutTreeState implements actors.StateStore.
func (s *kvState) PutTreeState(ctx context.Context, st *pb.TreeState) error {
	key, err := subjects.TreeStateKey(st.GetTree())
	if err != nil {
		return err
	}
	return putMessage(ctx, s.kv, key, st)
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
	keys := sortedKeys(lister)
	out := map[string]map[scheduler.PoolID]scheduler.Resources{}
	for _, key := range keys {
		e, err := s.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", key, err)
		}
		tree, vols, err := decodeTreeState(key, e.Value())
		if err != nil {
			logger.Warn("stored tree state ignored; the tree starts from the trees file's volumes", "err", err)
			continue
		}
		out[tree] = vols
	}
	return out, nil
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
