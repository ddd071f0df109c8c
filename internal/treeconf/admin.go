package treeconf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/sharetree/sharetree/subjects"
)

// maxAttempts bounds the read–validate–write loop of a write that lost a
// compare-and-set to a concurrent writer.
const maxAttempts = 32

// Admin is the write path of the live configuration: every write reads the
// whole configuration, applies the change, validates the trees it touches
// with every rule (see Rule) and writes the key with compare-and-set on the
// revision it read. A patch (Change with a key) or a whole document without
// an expected revision that loses the compare-and-set to another writer is
// read, validated and written again, so no writer's change is lost; one
// with an expected revision fails with a *ConflictError instead.
//
// Inside one process writes are serialised: pool and tree writes per tree,
// writes that touch the cluster attributes or several trees (tree create
// and remove, cluster set, apply) against all others. Writers in other
// processes are guarded by compare-and-set on each key. Rules that span
// several keys (children's guarantees within the parent's) are checked on
// the state each writer read; two processes changing two sibling pools at
// the same instant can together break such a rule, which Store.Load and
// Watch then report in TreeSnapshot.Err. Run one configuration service per
// cluster (the scheduler leader's) to rule that out.
type Admin struct {
	store   *Store
	counter OperationCounter
	logger  *slog.Logger
	// all is held shared by per-tree writes and exclusively by writes that
	// touch the cluster attributes or several trees.
	all   sync.RWMutex
	trees keyedMutex
}

// NewAdmin returns the write path over store. counter may be nil (no
// scheduler: no operations); logger may be nil.
func NewAdmin(store *Store, counter OperationCounter, logger *slog.Logger) *Admin {
	if counter == nil {
		counter = NoOperations{}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Admin{store: store, counter: counter, logger: logger.With("component", "treeconf")}
}

// Store returns the store the admin writes to.
func (a *Admin) Store() *Store { return a.store }

func (a *Admin) lockTree(name string) func() {
	a.all.RLock()
	unlock := a.trees.lock(name)
	return func() {
		unlock()
		a.all.RUnlock()
	}
}

func (a *Admin) lockAll() func() {
	a.all.Lock()
	return a.all.Unlock
}

func validName(what, tree, pool, name string) error {
	if err := subjects.ValidateToken(what, name); err != nil {
		return ruleErr(RuleName, tree, pool, "", "%s", trimSentinel(err, subjects.ErrInvalidToken))
	}
	return nil
}

func treeKey(tree string) subjects.ConfigKey {
	return subjects.ConfigKey{Kind: subjects.ConfigKeyTree, Tree: tree}
}

func poolKey(tree, pool string) subjects.ConfigKey {
	return subjects.ConfigKey{Kind: subjects.ConfigKeyPool, Tree: tree, Pool: pool}
}

var clusterKey = subjects.ConfigKey{Kind: subjects.ConfigKeyCluster}

// write runs the read–apply–validate–compare-and-set loop of a change to
// one existing key. build validates the change against the state read and
// returns the stored value and revision and the new value.
func (a *Admin) write(ctx context.Context, key subjects.ConfigKey, ch Change,
	build func(*state) ([]byte, uint64, []byte, error)) (Entry, error) {
	for range maxAttempts {
		st, err := a.store.loadState(ctx)
		if err != nil {
			return Entry{}, err
		}
		stored, rev, value, err := build(st)
		if err != nil {
			return Entry{}, err
		}
		if ch.ExpectedRevision != 0 && rev != ch.ExpectedRevision {
			return Entry{}, &ConflictError{Key: key.String(), Expected: ch.ExpectedRevision, Actual: rev}
		}
		if bytes.Equal(stored, value) {
			return Entry{Key: key, Value: value, Revision: rev}, nil
		}
		nrev, err := a.store.Update(ctx, key, value, rev)
		if err == nil {
			a.logger.Info("configuration changed", "key", key.String(), "revision", nrev)
			return Entry{Key: key, Value: value, Revision: nrev}, nil
		}
		if !errors.Is(err, ErrConflict) || ch.ExpectedRevision != 0 {
			return Entry{}, err
		}
		a.logger.Debug("lost a compare-and-set; retrying", "key", key.String(), "revision", rev)
	}
	return Entry{}, fmt.Errorf("%w: %s: gave up after %d attempts against concurrent writers", ErrConflict, describeKey(key), maxAttempts)
}

// withObject fills in the tree and pool of a RuleError raised before the
// object was known (a change that does not parse).
func withObject(err error, tree, pool string) error {
	var re *RuleError
	if errors.As(err, &re) && re.Tree == "" && re.Pool == "" {
		c := *re
		c.Tree, c.Pool = tree, pool
		return &c
	}
	return err
}

// listNames joins at most ten names.
func listNames(names []string) string {
	if len(names) > 10 {
		return strings.Join(names[:10], ", ") + fmt.Sprintf(" and %d more", len(names)-10)
	}
	return strings.Join(names, ", ")
}
