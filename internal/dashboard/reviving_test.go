package dashboard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/scheduler"
)

// A tree whose restarted scheduler still waits for its nodes' jobs is not
// sampled (nor archived): its usage would chart a dip that did not happen.
// Once revived, it is sampled again.
func TestSampleSkipsATreeBeingRevived(t *testing.T) {
	src := &fakeSource{
		trees: map[string]*scheduler.Result{
			"physical": result(0, pool(scheduler.RootID, "", 0, 0)),
			"gpu":      result(0, pool(scheduler.RootID, "", 0, 3)),
		},
		reviving: map[string]bool{"physical": true},
	}
	d, err := New(src, nil, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	arch := &memArchive{}
	d.SetArchive(arch)
	d.Sample()
	if _, n := d.history.Series("physical", scheduler.RootID); n != 0 {
		t.Errorf("the tree being revived has %d samples, want none", n)
	}
	if _, n := d.history.Series("gpu", scheduler.RootID); n != 1 {
		t.Errorf("the other tree has %d samples, want 1", n)
	}
	if arch.count() != 1 {
		t.Errorf("%d samples archived, want the other tree's 1", arch.count())
	}
	src.trees["physical"], src.reviving = result(time.Minute, pool(scheduler.RootID, "", 0, 5)), nil
	d.Sample()
	if got := cpuSeries(first(d.history.Series("physical", scheduler.RootID))); !cmp.Equal(got, []float64{5}) {
		t.Errorf("once revived, the tree charts %v, want [5]", got)
	}
}

// The pages of a tree being revived say that its usage may be too low.
func TestPagesSayATreeIsBeingRevived(t *testing.T) {
	const notice = "waits for the nodes to report their jobs"
	for _, reviving := range []bool{true, false} {
		src := &fakeSource{trees: map[string]*scheduler.Result{"physical": result(0, pool(scheduler.RootID, "", 0, 1))},
			reviving: map[string]bool{"physical": reviving}}
		d, err := New(src, nil, Config{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		d.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/dashboard/trees/physical", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("tree page: %d %s", rec.Code, rec.Body)
		}
		if got := strings.Contains(rec.Body.String(), notice); got != reviving {
			t.Errorf("reviving %v: the page says %q: %v", reviving, notice, got)
		}
	}
}
