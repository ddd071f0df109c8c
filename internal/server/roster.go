package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sharetree/sharetree/actors"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// kvRoster keeps the node roster (actors.NodeRoster) in the scheduler
// bucket, one key per node (subjects.NodeKey), written through the
// leader's fence on the bucket: an old leader can neither add a node nor
// take one out once a newer one has taken over.
type kvRoster struct {
	kv jetstream.KeyValue
	// fence conditions the writes on this leader still being the newest
	// (nil: unconditioned, for tests of the store alone).
	fence  *fence
	epoch  uint64
	logger *slog.Logger
}

var _ actors.NodeRoster = (*kvRoster)(nil)

// Load implements actors.NodeRoster: every node of the roster, by key. A
// key that names no node is skipped and logged.
func (r *kvRoster) Load(ctx context.Context) ([]string, error) {
	lister, err := r.kv.ListKeysFiltered(ctx, subjects.NodeKeys)
	if err != nil {
		if errors.Is(err, jetstream.ErrNoKeysFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("node roster: %w", err)
	}
	var nodes []string
	for _, key := range sortedKeys(lister) {
		node, err := subjects.ParseNodeKey(key)
		if err != nil {
			r.logger.Warn("node roster: a key that names no node is skipped", "key", key, "err", err)
			continue
		}
		nodes = append(nodes, node)
	}
	return nodes, nil
}

// Add implements actors.NodeRoster.
func (r *kvRoster) Add(ctx context.Context, node string) error {
	key, err := subjects.NodeKey(node)
	if err != nil {
		return err
	}
	entry := &pb.NodeRosterEntry{NodeId: node, Added: timestamppb.New(time.Now()), LeaderEpoch: r.epoch}
	if err := putMessage(ctx, r.kv, r.fence, subjects.SchedulerBucket, key, entry); err != nil {
		return fmt.Errorf("node roster: add %s: %w", node, err)
	}
	return nil
}

// Remove implements actors.NodeRoster (removing a node that is not there
// is not an error).
func (r *kvRoster) Remove(ctx context.Context, node string) error {
	key, err := subjects.NodeKey(node)
	if err != nil {
		return err
	}
	if err := deleteKey(ctx, r.kv, r.fence, subjects.SchedulerBucket, key); err != nil {
		return fmt.Errorf("node roster: remove %s: %w", node, err)
	}
	return nil
}
