package treeconf

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/subjects"
)

// Store keeps the live configuration in a JetStream key-value bucket
// (subjects.ConfigBucket): the cluster key, one key per tree and one per
// pool, each holding the canonical JSON document of its keys. Store reads
// and writes documents with compare-and-set on the key's revision; it does
// not validate them (Admin does).
type Store struct {
	kv     jetstream.KeyValue
	logger *slog.Logger
}

// BucketConfig returns the bucket's configuration: a few revisions of
// history per key (an audit trail for `nats kv history`) and the given
// replica count (1 for a single server, 3 on a cluster).
func BucketConfig(replicas int) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      subjects.ConfigBucket,
		Description: "sharetree live pool-tree configuration",
		History:     10,
		Replicas:    max(replicas, 1),
	}
}

// OpenStore creates the bucket when it does not exist (or updates its
// configuration) and returns a Store over it. logger may be nil.
func OpenStore(ctx context.Context, js jetstream.JetStream, replicas int, logger *slog.Logger) (*Store, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, BucketConfig(replicas))
	if err != nil {
		return nil, fmt.Errorf("%w: open bucket %s: %w", ErrStore, subjects.ConfigBucket, err)
	}
	return NewStore(kv, logger), nil
}

// NewStore returns a Store over an open bucket. logger may be nil.
func NewStore(kv jetstream.KeyValue, logger *slog.Logger) *Store {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Store{kv: kv, logger: logger.With("component", "treeconf")}
}

// Entry is one key's document.
type Entry struct {
	Key subjects.ConfigKey
	// Value is the canonical JSON document.
	Value    []byte
	Revision uint64
}

// Get returns a key's document; a key that does not exist (or was deleted)
// is an error wrapping ErrNotFound.
func (s *Store) Get(ctx context.Context, key subjects.ConfigKey) (Entry, error) {
	e, err := s.kv.Get(ctx, key.String())
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		return Entry{}, fmt.Errorf("%w: %s", ErrNotFound, describeKey(key))
	case err != nil:
		return Entry{}, fmt.Errorf("%w: get %s: %w", ErrStore, key, err)
	}
	return Entry{Key: key, Value: e.Value(), Revision: e.Revision()}, nil
}

// List returns every configuration key's document, sorted by key, from a
// consistent read of the bucket.
func (s *Store) List(ctx context.Context) ([]Entry, error) {
	raw, _, err := s.readAll(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(raw))
	for _, k := range sortedKeys(raw) {
		key, err := subjects.ParseConfigKey(k)
		if err != nil {
			continue
		}
		out = append(out, Entry{Key: key, Value: raw[k].value, Revision: raw[k].rev})
	}
	return out, nil
}

// Create writes a key that does not exist (or was deleted) and returns its
// revision; an existing key is an error wrapping ErrExists.
func (s *Store) Create(ctx context.Context, key subjects.ConfigKey, value []byte) (uint64, error) {
	rev, err := s.kv.Create(ctx, key.String(), value)
	switch {
	case errors.Is(err, jetstream.ErrKeyExists):
		return 0, fmt.Errorf("%w: %s", ErrExists, describeKey(key))
	case err != nil:
		return 0, fmt.Errorf("%w: create %s: %w", ErrStore, key, err)
	}
	s.logger.Debug("created", "key", key.String(), "revision", rev)
	return rev, nil
}

// Update writes a key if it is at revision and returns the new revision;
// otherwise the error is a *ConflictError naming the key and both
// revisions.
func (s *Store) Update(ctx context.Context, key subjects.ConfigKey, value []byte, revision uint64) (uint64, error) {
	rev, err := s.kv.Update(ctx, key.String(), value, revision)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		return 0, s.conflict(ctx, key, revision)
	}
	if err != nil {
		return 0, fmt.Errorf("%w: update %s: %w", ErrStore, key, err)
	}
	s.logger.Debug("updated", "key", key.String(), "revision", rev)
	return rev, nil
}

// Delete deletes a key if it is at revision (0: whatever its revision);
// otherwise the error is a *ConflictError.
func (s *Store) Delete(ctx context.Context, key subjects.ConfigKey, revision uint64) error {
	var opts []jetstream.KVDeleteOpt
	if revision != 0 {
		opts = append(opts, jetstream.LastRevision(revision))
	}
	err := s.kv.Delete(ctx, key.String(), opts...)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		return s.conflict(ctx, key, revision)
	}
	if err != nil {
		return fmt.Errorf("%w: delete %s: %w", ErrStore, key, err)
	}
	s.logger.Debug("deleted", "key", key.String(), "revision", revision)
	return nil
}

// conflict builds the ConflictError of a lost compare-and-set, with the
// key's current revision when it can be read.
func (s *Store) conflict(ctx context.Context, key subjects.ConfigKey, expected uint64) error {
	ce := &ConflictError{Key: key.String(), Expected: expected}
	if e, err := s.kv.Get(ctx, key.String()); err == nil {
		ce.Actual = e.Revision()
	}
	return ce
}

// Load returns a consistent snapshot of the whole configuration, every tree
// validated (see TreeSnapshot.Err).
func (s *Store) Load(ctx context.Context) (Snapshot, error) {
	st, err := s.loadState(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	return st.snapshot(), nil
}

// rawEntry is one key's value and revision.
type rawEntry struct {
	value []byte
	rev   uint64
}

// readAll reads every key of the bucket consistently and returns the keys'
// values and the last revision. A watcher delivers the last value of every
// key, then every later write, in stream order; the state after applying
// them in that order is the bucket at the last revision applied. The
// watcher's end-of-initial-values marker alone is not enough: a key written
// while the watcher starts can be skipped from the initial values and come
// only as a later update (seen with nats-server 2.15). So after the marker
// readAll asks the bucket for its last revision and reads on until it has
// applied it.
func (s *Store) readAll(ctx context.Context) (map[string]rawEntry, uint64, error) {
	w, err := s.kv.WatchAll(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: watch %s: %w", ErrStore, subjects.ConfigBucket, err)
	}
	defer func() { _ = w.Stop() }()
	out := map[string]rawEntry{}
	var cu catchUp
	for {
		select {
		case <-ctx.Done():
			return nil, 0, fmt.Errorf("%w: read %s: %w", ErrStore, subjects.ConfigBucket, ctx.Err())
		case e, ok := <-w.Updates():
			if !ok {
				return nil, 0, fmt.Errorf("%w: read %s: the watcher stopped", ErrStore, subjects.ConfigBucket)
			}
			if e != nil {
				if e.Operation() == jetstream.KeyValuePut {
					out[e.Key()] = rawEntry{value: e.Value(), rev: e.Revision()}
				} else {
					delete(out, e.Key())
				}
			}
			done, err := cu.observe(ctx, s.kv, e)
			if err != nil {
				return nil, 0, err
			}
			if done {
				return out, cu.last, nil
			}
		}
	}
}

// catchUp tracks a watcher's initial read: it is done once the watcher has
// sent its end-of-initial-values marker and delivered every write up to
// the bucket's last revision as of that marker.
type catchUp struct {
	last   uint64
	target uint64
	marker bool
}

// observe records one watcher entry (nil: the marker) and reports whether
// the initial read is complete.
func (c *catchUp) observe(ctx context.Context, kv jetstream.KeyValue, e jetstream.KeyValueEntry) (bool, error) {
	if e != nil {
		c.last = max(c.last, e.Revision())
		return c.marker && c.last >= c.target, nil
	}
	if !c.marker {
		st, err := kv.Status(ctx)
		if err != nil {
			return false, fmt.Errorf("%w: status of %s: %w", ErrStore, subjects.ConfigBucket, err)
		}
		if bs, ok := st.(*jetstream.KeyValueBucketStatus); ok {
			c.target = bs.StreamInfo().State.LastSeq
		}
		c.marker = true
	}
	return c.last >= c.target, nil
}

// loadState reads and decodes the whole configuration.
func (s *Store) loadState(ctx context.Context) (*state, error) {
	raw, last, err := s.readAll(ctx)
	if err != nil {
		return nil, err
	}
	st := newState()
	for _, k := range sortedKeys(raw) {
		st.put(k, raw[k].value, raw[k].rev)
	}
	st.rev = max(st.rev, last)
	return st, nil
}

func describeKey(k subjects.ConfigKey) string {
	switch k.Kind {
	case subjects.ConfigKeyTree:
		return fmt.Sprintf("tree %q", k.Tree)
	case subjects.ConfigKeyPool:
		return fmt.Sprintf("pool %q in tree %q", k.Pool, k.Tree)
	}
	return "cluster attributes"
}
