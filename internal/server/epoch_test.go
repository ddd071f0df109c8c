package server

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/subjects"
)

// Schedulers starting together each raise the epoch to a value of their
// own: a compare-and-set conflict is tried again. Any other failure is
// returned as it is, not as a conflict.
func TestEpochRaisedOnceByEachStart(t *testing.T) {
	ctx := context.Background()
	kv := schedulerBucket(t)
	const starts = 4
	var (
		mu   sync.Mutex
		got  []uint64
		errs []error
		wg   sync.WaitGroup
	)
	for range starts {
		wg.Go(func() {
			e, _, err := bumpEpoch(ctx, kv)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			got = append(got, e)
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("bumpEpoch: %v", errs)
	}
	slices.Sort(got)
	if diff := cmp.Diff([]uint64{1, 2, 3, 4}, got); diff != "" {
		t.Errorf("epochs (-want +got):\n%s", diff)
	}

	// A stored epoch that does not parse is named.
	if _, err := kv.Put(ctx, "epoch", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := bumpEpoch(ctx, kv); err == nil || !strings.Contains(err.Error(), `stored epoch "x"`) {
		t.Errorf("bumpEpoch over a bad epoch: %v", err)
	}
}

func TestCASConflict(t *testing.T) {
	cases := map[string]struct {
		err  error
		want bool
	}{
		"key exists":           {jetstream.ErrKeyExists, true},
		"wrong last sequence":  {&jetstream.APIError{ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence}, true},
		"wrong last seq (R>1)": {&jetstream.APIError{ErrorCode: jetstream.JSErrCodeStreamWrongLastSequenceConstant}, true},
		"stream not found":     {&jetstream.APIError{ErrorCode: jetstream.JSErrCodeStreamNotFound}, false},
		"no responders":        {errors.New("nats: no responders available for request"), false},
	}
	for name, c := range cases {
		if got := casConflict(c.err); got != c.want {
			t.Errorf("%s: casConflict = %v, want %v", name, got, c.want)
		}
	}
}

// schedulerBucket is the scheduler bucket on a new embedded NATS server.
func schedulerBucket(t *testing.T) jetstream.KeyValue {
	t.Helper()
	js, err := jetstream.New(testutil.Connect(t, testutil.StartNATS(t)))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateOrUpdateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: subjects.SchedulerBucket})
	if err != nil {
		t.Fatal(err)
	}
	return kv
}
