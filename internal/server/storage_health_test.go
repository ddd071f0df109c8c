package server

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStorageHealth(t *testing.T) {
	h := newStorageHealth(slog.New(slog.DiscardHandler))
	down := errors.New("jetstream not enabled")
	steps := []struct {
		store     string
		err       error
		available bool
		failing   []string
	}{
		{storeOperations, nil, true, []string{}},
		{storeOperations, fmt.Errorf("write: %w", ErrFenced), true, []string{}}, // a newer leader, not the storage
		{storeJournal, down, false, []string{storeJournal}},
		{storeOperations, down, false, []string{storeJournal, storeOperations}},
		{storeJournal, nil, false, []string{storeOperations}}, // one store still refuses
		{storeOperations, nil, true, []string{}},
		{storeJetStream, down, false, []string{storeJetStream}},
		{storeJetStream, nil, true, []string{}},
	}
	for i, s := range steps {
		h.observe(s.store, s.err)
		if got := h.Available(); got != s.available {
			t.Errorf("step %d (%s, %v): available %v, want %v", i, s.store, s.err, got, s.available)
		}
		if diff := cmp.Diff(s.failing, h.failingStores()); diff != "" {
			t.Errorf("step %d: failing stores (-want +got):\n%s", i, diff)
		}
	}
	if n := h.outages.Load(); n != 2 {
		t.Errorf("%d outages counted, want 2", n)
	}
	var none *storageHealth
	none.observe(storeJournal, down) // a store without health: nothing to record
}
