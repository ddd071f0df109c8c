package treeconf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// GetCluster returns the cluster attributes' document (`{}` with revision
// 0 when the key does not exist).
func (a *Admin) GetCluster(ctx context.Context) (Entry, error) {
	e, err := a.store.Get(ctx, clusterKey)
	if errors.Is(err, ErrNotFound) {
		return Entry{Key: clusterKey, Value: []byte("{}")}, nil
	}
	return e, err
}

// SetCluster changes the cluster attributes (key default_tree).
func (a *Admin) SetCluster(ctx context.Context, ch Change) (Entry, error) {
	defer a.lockAll()()
	for range maxAttempts {
		st, err := a.store.loadState(ctx)
		if err != nil {
			return Entry{}, err
		}
		if ch.ExpectedRevision != 0 && st.clusterRev != ch.ExpectedRevision {
			return Entry{}, &ConflictError{Key: clusterKey.String(), Expected: ch.ExpectedRevision, Actual: st.clusterRev}
		}
		doc, err := ch.apply(st.clusterRaw)
		if err != nil {
			return Entry{}, err
		}
		cl, err := decodeCluster(doc)
		if err != nil {
			return Entry{}, err
		}
		if err := checkCluster(st.withCluster(cl)); err != nil {
			return Entry{}, err
		}
		value, err := cl.JSON()
		if err != nil {
			return Entry{}, err
		}
		if st.clusterRev != 0 && bytes.Equal(value, st.clusterRaw) {
			return Entry{Key: clusterKey, Value: value, Revision: st.clusterRev}, nil
		}
		var rev uint64
		if st.clusterRev == 0 {
			rev, err = a.store.Create(ctx, clusterKey, value)
		} else {
			rev, err = a.store.Update(ctx, clusterKey, value, st.clusterRev)
		}
		if err == nil {
			a.logger.Info("cluster attributes changed", "default_tree", cl.DefaultTree, "revision", rev)
			return Entry{Key: clusterKey, Value: value, Revision: rev}, nil
		}
		if !(errors.Is(err, ErrConflict) || errors.Is(err, ErrExists)) || ch.ExpectedRevision != 0 {
			return Entry{}, err
		}
	}
	return Entry{}, fmt.Errorf("%w: cluster attributes: gave up after %d attempts against concurrent writers", ErrConflict, maxAttempts)
}
