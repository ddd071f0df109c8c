package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/jsutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// kvStore keeps operations in a JetStream key-value bucket, one key each.
type kvStore struct {
	kv jetstream.KeyValue
	// fence conditions the writes on this leader still being the newest
	// (nil: unconditioned, for tests of the store alone).
	fence *fence
	// health learns each write's outcome (nil: nothing does).
	health *storageHealth
}

// Put implements actors.OperationStore.
func (s *kvStore) Put(ctx context.Context, st *pb.OperationStatus) error {
	key, err := subjects.OperationKey(st.GetId())
	if err != nil {
		return err
	}
	err = putMessage(ctx, s.kv, s.fence, subjects.OperationsBucket, key, st)
	s.health.observe(storeOperations, err)
	return err
}

// putMessage writes m under key of bucket (kv), through f unless it is nil.
func putMessage(ctx context.Context, kv jetstream.KeyValue, f *fence, bucket, key string, m proto.Message) error {
	data, err := proto.Marshal(m)
	if err != nil {
		return err
	}
	if f != nil {
		return f.put(ctx, subjects.KVKey(bucket, key), data)
	}
	_, err = kv.Put(ctx, key, data)
	return err
}

// deleteKey marks key of bucket (kv) deleted, through f unless it is nil;
// deleting a key that is not there is not an error.
func deleteKey(ctx context.Context, kv jetstream.KeyValue, f *fence, bucket, key string) error {
	var err error
	if f != nil {
		err = f.delete(ctx, subjects.KVKey(bucket, key))
	} else {
		err = kv.Delete(ctx, key)
	}
	if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// sortedKeys drains a key lister into a sorted list.
func sortedKeys(lister jetstream.KeyLister) []string {
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// List implements actors.OperationStore: every stored operation, by key.
func (s *kvStore) List(ctx context.Context) ([]*pb.OperationStatus, error) {
	lister, err := s.kv.ListKeysFiltered(ctx, subjects.OperationKeys)
	if err != nil {
		return nil, err
	}
	keys := sortedKeys(lister)
	out := make([]*pb.OperationStatus, 0, len(keys))
	for _, k := range keys {
		e, err := s.kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", k, err)
		}
		st := &pb.OperationStatus{}
		if err := proto.Unmarshal(e.Value(), st); err != nil {
			return nil, fmt.Errorf("decode %s: %w", k, err)
		}
		out = append(out, st)
	}
	return out, nil
}

// bumpEpoch raises the leader epoch stored in the scheduler bucket with
// compare-and-set and returns the new value and the revision of its write
// (which fences the leader's writes to the bucket).
func bumpEpoch(ctx context.Context, kv jetstream.KeyValue) (epoch, rev uint64, err error) {
	const key = subjects.EpochKey
	for range 10 {
		e, err := kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			if rev, err := kv.Create(ctx, key, []byte("1")); err == nil {
				return 1, rev, nil
			} else if !errors.Is(err, jetstream.ErrKeyExists) {
				return 0, 0, err
			}
			continue
		}
		if err != nil {
			return 0, 0, err
		}
		cur, err := strconv.ParseUint(string(e.Value()), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("stored epoch %q: %w", e.Value(), err)
		}
		next := cur + 1
		rev, err := kv.Update(ctx, key, []byte(strconv.FormatUint(next, 10)), e.Revision())
		if err == nil {
			return next, rev, nil
		}
		if !casConflict(err) {
			return 0, 0, fmt.Errorf("epoch: raise to %d: %w", next, err)
		}
	}
	return 0, 0, errors.New("epoch: too many concurrent updates")
}

// casConflict reports whether a compare-and-set write failed only because
// another writer came first (worth another try): jsutil.CASConflict, or a
// key gone between a read and an update.
func casConflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyNotFound) || jsutil.CASConflict(err)
}
