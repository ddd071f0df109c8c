package actors

import (
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// tagFilter takes the nodes with a tag.
type tagFilter string

func (f tagFilter) Match(tags []string) bool { return slices.Contains(tags, string(f)) }

// recordedEvents keeps the events published, by tree and kind.
type recordedEvents struct {
	mu  sync.Mutex
	evs []recordedEvent
}

type recordedEvent struct {
	tree string
	kind subjects.EventKind
	ev   *pb.Event
}

func (r *recordedEvents) Publish(tree string, kind subjects.EventKind, ev *pb.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, recordedEvent{tree, kind, ev})
}

// jobFinishedIn reports whether a job event of tree has job id finished.
func (r *recordedEvents) jobFinishedIn(tree, id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.evs {
		if e.kind != subjects.EventJob || e.tree != tree || e.ev.GetTree() != tree {
			continue
		}
		for _, j := range e.ev.GetJobs().GetJobs() {
			if j.GetJobId() == id && j.GetState() == pb.JobState_JOB_STATE_COMPLETED {
				return true
			}
		}
	}
	return false
}

// jobEnd returns the reason of the job event of tree that ended job id in
// state ("" for none).
func (r *recordedEvents) jobEnd(tree, id string, state pb.JobState) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.evs {
		if e.kind != subjects.EventJob || e.tree != tree {
			continue
		}
		for _, j := range e.ev.GetJobs().GetJobs() {
			if j.GetJobId() == id && j.GetState() == state {
				return j.GetReason()
			}
		}
	}
	return ""
}

// A node whose tags stop matching its tree's node_tag_filter belongs to no
// tree; a job the tree started there still finishes, and its job event is
// the tree's (it crashed the scheduler: the event was keyed by the node's
// current tree).
func TestJobOfANodeThatLeftEveryTreeFinishes(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg := DefaultConfig()
	cfg.Now, cfg.RequestTimeout = clock.Now, 5*time.Second
	tree := func(filter string) TreeSpec {
		return TreeSpec{Name: "physical", Config: scheduler.DefaultTreeConfig(), NodeFilter: tagFilter(filter)}
	}
	events := &recordedEvents{}
	sys, err := Start(cfg, Deps{Events: events, Signals: nopSignals{}, Store: memStore{}, Epoch: 1}, []TreeSpec{tree("a")}, "physical", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sys.Stop)
	ids := make(chan string, 1)
	sys.Submit(&SubmitOperation{Spec: &pb.OperationSpec{Tasks: []*pb.TaskSpec{{
		Name: "t", JobCount: 1, JobResources: &pb.Resources{Cpu: 1},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(time.Hour)},
	}}}, Reply: func(r *pb.StartOperationResponse, e *pb.Error) {
		if e != nil {
			t.Errorf("submit: %v", e)
		}
		ids <- r.GetOperationId()
	}})
	await(t, ids, "submission")
	seq := uint64(0)
	beat := func(running, finished []string) *pb.HeartbeatResponse {
		t.Helper()
		seq++
		hb := &pb.Heartbeat{NodeId: "n1", Incarnation: "i1", Sequence: seq, Tags: []string{"a"}, ResourceLimits: &pb.Resources{Cpu: 1}}
		for _, id := range running {
			hb.RunningJobs = append(hb.RunningJobs, &pb.RunningJob{JobId: id})
		}
		for _, id := range finished {
			hb.FinishedJobs = append(hb.FinishedJobs, &pb.FinishedJob{JobId: id, State: pb.JobState_JOB_STATE_COMPLETED})
		}
		answers := make(chan hbAnswer, 1)
		sys.Heartbeat(&NodeHeartbeat{Heartbeat: hb, Reply: func(r *pb.HeartbeatResponse, e *pb.Error) { answers <- hbAnswer{r, e} }})
		a := await(t, answers, "heartbeat answer")
		if a.err != nil {
			t.Fatalf("heartbeat %d: %v", seq, a.err)
		}
		return a.resp
	}
	var job string
	testutil.WaitFor(t, 10*time.Second, "the job to start", func() bool {
		if js := beat(nil, nil).GetJobsToStart(); len(js) == 1 {
			job = js[0].GetJobId()
		}
		return job != ""
	})
	// The tree now takes only nodes tagged b: n1 is in no tree.
	if err := sys.ApplyTrees([]TreeSpec{tree("b")}, "physical", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	beat([]string{job}, nil)
	beat(nil, []string{job})
	testutil.WaitFor(t, 10*time.Second, "the job's completion in the tree's job events", func() bool {
		select {
		case err := <-sys.Fatal():
			t.Fatalf("scheduler stopped: %v", err)
		default:
		}
		return events.jobFinishedIn("physical", job)
	})
}
