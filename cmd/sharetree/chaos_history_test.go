package main

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
)

// chaosHistory is what a chaos run recorded: the invariant checker's only
// input (checkChaosHistory), so that it can be fed a hand-made history.
type chaosHistory struct {
	Seed  uint64
	Start time.Time // times in messages are relative to it
	End   time.Time // every agent had stopped
	// Nodes is each node's capacity.
	Nodes map[string]scheduler.Resources
	// Events are the agents' job starts, job ends and epoch changes; those
	// of one node are in the order they happened on it (each is recorded
	// with the agent's lock held).
	Events []chaosEvent
	// Epochs are samples of each agent's Stats().LeaderEpoch, in order.
	Epochs []chaosEpochSample
	Faults []chaosFault
	// Submissions are every submission tried, acknowledged or not.
	Submissions []*chaosSubmission
	// Listed is the final listing of every operation.
	Listed []*pb.OperationStatus
	// Stats are the agents' counters once they stopped.
	Stats map[string]nodeagent.Stats
	// Schedulers are each scheduler process's whole stderr, in start order.
	Schedulers [][]string
	// Exits say how each scheduler process that the test did not end
	// ended.
	Exits []string
}

type chaosEventKind int

const (
	chaosJobStart chaosEventKind = iota
	chaosJobEnd
	chaosEpochChange
)

type chaosEvent struct {
	At   time.Time
	Node string
	Kind chaosEventKind
	// Job and Op name the job (start, end).
	Job, Op string
	// Alloc is what the node's running jobs held with the job (start);
	// Over, that the agent found it beyond the node's capacity.
	Alloc scheduler.Resources
	Over  bool
	State string // end: the job's final state
	// Epoch is the agent's new highest leader epoch, Prev the one before
	// (epoch change).
	Epoch, Prev uint64
}

type chaosEpochSample struct {
	At    time.Time
	Node  string
	Epoch uint64
}

type chaosFault struct {
	At, End time.Time
	Kind    string // kill, pause, partition, delay
	Target  string // "scheduler", a node id, or "all" (nodes)
	Detail  string
}

type chaosSubmission struct {
	RequestID, Title string
	Jobs             int // jobs in all of its tasks
	At               time.Time
	Acked            bool
	ID               string // the operation id, when acknowledged
}

type chaosViolation struct {
	Inv string // I1 ... I5, or H for a history that does not hold together
	Msg string
}

func (v chaosViolation) String() string { return v.Inv + ": " + v.Msg }

// chaosRecorder collects a run's history from the agents' hooks, the
// samplers, the chaos loop and the submitters.
type chaosRecorder struct {
	mu sync.Mutex
	h  chaosHistory
}

func (r *chaosRecorder) event(e chaosEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.h.Events = append(r.h.Events, e)
}

func (r *chaosRecorder) epochSample(s chaosEpochSample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.h.Epochs = append(r.h.Epochs, s)
}

func (r *chaosRecorder) fault(f chaosFault) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.h.Faults = append(r.h.Faults, f)
}

func (r *chaosRecorder) submission(s *chaosSubmission) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.h.Submissions = append(r.h.Submissions, s)
}

func (r *chaosRecorder) acked(s *chaosSubmission, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s.Acked, s.ID = true, id
}

// ackedIDs returns the acknowledged operation ids.
func (r *chaosRecorder) ackedIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for _, s := range r.h.Submissions {
		if s.Acked {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

// jobRefParts splits "<operation>.<task>.<index>.<attempt>.<epoch>" into
// "<operation>.<task>.<index>" and the epoch.
func jobRefParts(id string) (key string, epoch uint64, ok bool) {
	parts := strings.Split(id, ".")
	if len(parts) != 5 {
		return "", 0, false
	}
	epoch, err := strconv.ParseUint(parts[4], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return strings.Join(parts[:3], "."), epoch, true
}

var (
	logTime     = regexp.MustCompile(`^time=(\S+)`)
	nodeLostLog = regexp.MustCompile(`msg="node lost" node=(\S+)`)
)

// schedulerMark is a time-stamped line of a scheduler's stderr: a node
// declared lost, or a scheduler serving under an epoch.
type schedulerMark struct {
	At    time.Time
	Node  string // lost
	Epoch uint64 // serving
}

// schedulerMarks reads the node-lost and serving lines of every scheduler.
func (h *chaosHistory) schedulerMarks() (lost, serving []schedulerMark) {
	for _, lines := range h.Schedulers {
		for _, line := range lines {
			m := logTime.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			at, err := time.Parse(time.RFC3339Nano, m[1])
			if err != nil {
				continue
			}
			if l := nodeLostLog.FindStringSubmatch(line); l != nil {
				lost = append(lost, schedulerMark{At: at, Node: l[1]})
			}
			if s := servingLine.FindStringSubmatch(line); s != nil {
				e, _ := strconv.ParseUint(s[2], 10, 64)
				serving = append(serving, schedulerMark{At: at, Epoch: e})
			}
		}
	}
	return lost, serving
}

// rel formats t relative to the run's start.
func (h *chaosHistory) rel(t time.Time) string {
	return fmt.Sprintf("+%.3fs", t.Sub(h.Start).Seconds())
}

// jobRun is one job's run on one node.
type jobRun struct {
	id, node   string
	start, end time.Time
	ended      bool
	state      string
}

// runs pairs each node's starts and ends into runs, in start order; it
// reports ends without a start.
func (h *chaosHistory) runs() (runs []*jobRun, orphanEnds []chaosEvent) {
	open := map[string]*jobRun{} // node + job id
	for _, e := range h.Events {
		switch e.Kind {
		case chaosJobStart:
			r := &jobRun{id: e.Job, node: e.Node, start: e.At, end: h.End}
			runs = append(runs, r)
			open[e.Node+" "+e.Job] = r
		case chaosJobEnd:
			r := open[e.Node+" "+e.Job]
			if r == nil {
				orphanEnds = append(orphanEnds, e)
				continue
			}
			r.end, r.ended, r.state = e.At, true, e.State
			delete(open, e.Node+" "+e.Job)
		}
	}
	return runs, orphanEnds
}

// impaired reports the fault that kept node from the scheduler (its
// partition, a delay of its bytes, or the scheduler paused) at some time
// in [from, to].
func (h *chaosHistory) impaired(node string, from, to time.Time) (chaosFault, bool) {
	for _, f := range h.Faults {
		hits := f.Kind == "partition" && f.Target == node ||
			f.Kind == "delay" && (f.Target == node || f.Target == "all") ||
			f.Kind == "pause"
		if hits && !f.At.After(to) && !f.End.Before(from) {
			return f, true
		}
	}
	return chaosFault{}, false
}

// checkChaosHistory checks the invariants over a history and returns every
// violation found.
func checkChaosHistory(h *chaosHistory) []chaosViolation {
	var out []chaosViolation
	add := func(inv, format string, args ...any) {
		out = append(out, chaosViolation{Inv: inv, Msg: fmt.Sprintf(format, args...)})
	}
	runs, orphanEnds := h.runs()
	lost, serving := h.schedulerMarks()

	// H: the history holds together: the hooks saw what the agents
	// counted, and every job the agents started ended before they stopped.
	for _, e := range orphanEnds {
		add("H", "job %s ended on %s at %s without a recorded start", e.Job, e.Node, h.rel(e.At))
	}
	starts, ends := map[string]uint64{}, map[string]uint64{}
	for _, e := range h.Events {
		switch e.Kind {
		case chaosJobStart:
			starts[e.Node]++
		case chaosJobEnd:
			ends[e.Node]++
		}
	}
	for _, node := range slices.Sorted(maps.Keys(h.Stats)) {
		st := h.Stats[node]
		if starts[node] != st.JobsStarted {
			add("H", "node %s: %d starts recorded, the agent counted %d", node, starts[node], st.JobsStarted)
		}
		if n := st.JobsCompleted + st.JobsFailed + st.JobsAborted; ends[node] != n {
			add("H", "node %s: %d job ends recorded, the agent counted %d", node, ends[node], n)
		}
	}
	for _, r := range runs {
		if !r.ended {
			add("H", "job %s started on %s at %s never ended", r.id, r.node, h.rel(r.start))
		}
	}

	// I1: no job id started twice, on one node or two. (The agent itself
	// ignores a start of a job it runs or still reports, but not one of a
	// job it was acknowledged and forgot.)
	byID := map[string][]*jobRun{}
	for _, r := range runs {
		byID[r.id] = append(byID[r.id], r)
	}
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		if rs := byID[id]; len(rs) > 1 {
			var where []string
			for _, r := range rs {
				where = append(where, fmt.Sprintf("%s at %s", r.node, h.rel(r.start)))
			}
			add("I1", "job %s started %d times: %s", id, len(rs), strings.Join(where, ", "))
		}
	}
	// I1: no two attempts of one job run at once, unless the scheduler
	// legitimately gave up on the first: its node was declared lost (the
	// scheduler fails a lost node's jobs and runs them again, while the
	// node, partitioned away, may still run them), or a scheduler
	// restarted while it ran and its node could not report it within the
	// revival window (partitioned, delayed, or the scheduler paused: the
	// restarted scheduler runs again the jobs no node reported in time,
	// and aborts the first when its node reports it). Any other overlap is
	// a job run twice.
	for _, r := range runs {
		if _, _, ok := jobRefParts(r.id); !ok {
			add("I1", "job id %q on %s is not <operation>.<task>.<index>.<attempt>.<epoch>", r.id, r.node)
		}
	}
	for _, o := range h.concurrentAttempts(runs, lost, serving) {
		if o.excuse == "" {
			first, second := o.first, o.second
			add("I1", "job %s ran twice at once: %s on %s [%s, %s] and %s on %s [%s, %s], with no node lost and no restart with the node impaired in between",
				o.key, first.id, first.node, h.rel(first.start), h.rel(first.end), second.id, second.node, h.rel(second.start), h.rel(second.end))
		}
	}

	// I2: no node ever held more than it has.
	for _, e := range h.Events {
		if e.Kind != chaosJobStart {
			continue
		}
		capacity, known := h.Nodes[e.Node]
		over := e.Over
		for r, v := range e.Alloc {
			if known && v > capacity[r]+float64(1e-9*max(capacity[r], 1)) {
				over = true
			}
		}
		if over {
			add("I2", "node %s over capacity at %s when job %s started: its jobs hold %s, it has %s",
				e.Node, h.rel(e.At), e.Job, e.Alloc.String(), capacity.String())
		}
	}
	for _, node := range slices.Sorted(maps.Keys(h.Stats)) {
		if n := h.Stats[node].JobsOverCapacity; n > 0 {
			add("I2", "node %s counted %d jobs started beyond its capacity", node, n)
		}
	}

	out = append(out, h.checkTracked(runs)...)
	out = append(out, h.checkEpochs(serving)...)

	// I5: no panic, fatal error or data race in any scheduler process,
	// and none ended but by the test's hand.
	for _, e := range h.Exits {
		add("I5", "%s", e)
	}
	for i, lines := range h.Schedulers {
		for n, line := range lines {
			l := strings.ToLower(line)
			if strings.Contains(l, "panic") || strings.Contains(l, "fatal error") || strings.Contains(line, "DATA RACE") {
				add("I5", "scheduler process %d, stderr line %d: %s", i+1, n+1, line)
			}
		}
	}
	return out
}

// attemptOverlap is two attempts of one job that ran at once, and why
// that could be legitimate ("" for no reason).
type attemptOverlap struct {
	key           string
	first, second *jobRun
	excuse        string
}

// concurrentAttempts returns every two attempts of one job that ran at once.
func (h *chaosHistory) concurrentAttempts(runs []*jobRun, lost, serving []schedulerMark) []attemptOverlap {
	byKey := map[string][]*jobRun{}
	for _, r := range runs {
		if key, _, ok := jobRefParts(r.id); ok {
			byKey[key] = append(byKey[key], r)
		}
	}
	var out []attemptOverlap
	for _, key := range slices.Sorted(maps.Keys(byKey)) {
		rs := byKey[key]
		for i, a := range rs {
			for _, b := range rs[i+1:] {
				if a.id == b.id || !a.end.After(b.start) || !b.end.After(a.start) {
					continue // the same id (I1's first check), or apart
				}
				first, second := a, b
				if b.start.Before(a.start) {
					first, second = b, a
				}
				out = append(out, attemptOverlap{key: key, first: first, second: second, excuse: h.overlapExcuse(first, second, lost, serving)})
			}
		}
	}
	return out
}

// overlapExcuse says why two attempts of one job could legitimately run
// at once (see checkChaosHistory), or "".
func (h *chaosHistory) overlapExcuse(first, second *jobRun, lost, serving []schedulerMark) string {
	// The node lost a little before the first run's start is the same
	// loss: the start was on its way when the scheduler gave up.
	const slack = 500 * time.Millisecond
	for _, l := range lost {
		if l.Node == first.node && !l.At.Before(first.start.Add(-slack)) && !l.At.After(second.start) {
			return fmt.Sprintf("node %s lost at %s", l.Node, h.rel(l.At))
		}
	}
	for _, s := range serving {
		if s.At.After(first.start) && s.At.Before(second.start) {
			if f, ok := h.impaired(first.node, first.start, second.start); ok {
				return fmt.Sprintf("restart at %s with %s %s at %s", h.rel(s.At), f.Kind, f.Target, h.rel(f.At))
			}
		}
	}
	return ""
}

var terminalStates = map[pb.OperationState]bool{
	pb.OperationState_OPERATION_STATE_COMPLETED: true,
	pb.OperationState_OPERATION_STATE_FAILED:    true,
	pb.OperationState_OPERATION_STATE_ABORTED:   true,
}

// checkTracked checks I3: every acknowledged submission is listed once and
// terminal, a failed or aborted one with its reason; every listed
// operation is one of the submissions (acknowledged or not, since a
// submission whose answer was lost may still have been stored), no
// submission is listed twice, and each completed operation's jobs did
// complete on some node.
func (h *chaosHistory) checkTracked(runs []*jobRun) []chaosViolation {
	var out []chaosViolation
	add := func(format string, args ...any) {
		out = append(out, chaosViolation{Inv: "I3", Msg: fmt.Sprintf(format, args...)})
	}
	listed := map[string]*pb.OperationStatus{}
	byRequest := map[string]*pb.OperationStatus{}
	subs := map[string]*chaosSubmission{}
	for _, s := range h.Submissions {
		subs[s.RequestID] = s
	}
	for _, op := range h.Listed {
		if listed[op.GetId()] != nil {
			add("operation %s listed twice", op.GetId())
			continue
		}
		listed[op.GetId()] = op
		rid := op.GetRequestId()
		s := subs[rid]
		switch {
		case s == nil:
			add("operation %s (%q, request %q) listed, but no such submission was made", op.GetId(), op.GetSpec().GetTitle(), rid)
			continue
		case byRequest[rid] != nil:
			add("submission %q (request %s, at %s) started two operations: %s and %s", s.Title, rid, h.rel(s.At), byRequest[rid].GetId(), op.GetId())
		case op.GetSpec().GetTitle() != s.Title:
			add("operation %s of request %s has title %q, the submission %q", op.GetId(), rid, op.GetSpec().GetTitle(), s.Title)
		}
		byRequest[rid] = op
		if !terminalStates[op.GetState()] {
			acked := "not acknowledged"
			if s.Acked {
				acked = "acknowledged"
			}
			add("operation %s (%s, submitted at %s) still %s at the end, jobs %v", op.GetId(), acked, h.rel(s.At), op.GetState(), op.GetJobs())
		}
	}
	completed := map[string]bool{} // job key, by some run that ended COMPLETED
	for _, r := range runs {
		if key, _, ok := jobRefParts(r.id); ok && r.state == pb.JobState_JOB_STATE_COMPLETED.String() {
			completed[key] = true
		}
	}
	for _, s := range h.Submissions {
		if !s.Acked {
			continue
		}
		op := listed[s.ID]
		switch {
		case op == nil:
			add("acknowledged operation %s (%q, submitted at %s) is not listed", s.ID, s.Title, h.rel(s.At))
			continue
		case op.GetRequestId() != s.RequestID:
			add("acknowledged operation %s of request %s is listed with request %q", s.ID, s.RequestID, op.GetRequestId())
		}
		switch op.GetState() {
		case pb.OperationState_OPERATION_STATE_COMPLETED:
			if got := op.GetJobs().GetCompleted(); got != int64(s.Jobs) {
				add("operation %s completed with %d of its %d jobs completed (%v)", s.ID, got, s.Jobs, op.GetJobs())
			}
			for t, task := range op.GetSpec().GetTasks() {
				for i := range task.GetJobCount() {
					if key := fmt.Sprintf("%s.%d.%d", s.ID, t, i); !completed[key] {
						add("operation %s completed, but no node completed its job %s", s.ID, key)
					}
				}
			}
		case pb.OperationState_OPERATION_STATE_FAILED, pb.OperationState_OPERATION_STATE_ABORTED:
			if op.GetError().GetMessage() == "" {
				add("operation %s %s without a reason", s.ID, op.GetState())
			}
		}
	}
	return out
}

// checkEpochs checks I4: each agent's highest leader epoch never
// decreases (in its own changes, which are recorded in order with its
// starts, and in the samples of its counters), and no job starts from a
// command of an epoch below the highest the agent had seen: a job's id
// carries the epoch of the scheduler that started it, and a scheduler
// starts jobs only with ids of its own epoch, in responses of that epoch;
// a job id's epoch below the agent's highest at its start is a command of
// an older leader executed.
func (h *chaosHistory) checkEpochs(serving []schedulerMark) []chaosViolation {
	var out []chaosViolation
	add := func(format string, args ...any) {
		out = append(out, chaosViolation{Inv: "I4", Msg: fmt.Sprintf(format, args...)})
	}
	// An agent's first epoch (from 0) is not an epoch change; it is the
	// Prev of its first change, or, with none, its final epoch.
	first := map[string]uint64{}
	for _, e := range h.Events {
		if _, ok := first[e.Node]; !ok && e.Kind == chaosEpochChange {
			first[e.Node] = e.Prev
		}
	}
	for node, st := range h.Stats {
		if _, ok := first[node]; !ok {
			first[node] = st.LeaderEpoch
		}
	}
	cur := maps.Clone(first)
	served := map[uint64]bool{}
	for _, s := range serving {
		served[s.Epoch] = true
	}
	for _, e := range h.Events {
		switch e.Kind {
		case chaosEpochChange:
			if e.Epoch <= e.Prev || e.Prev != cur[e.Node] {
				add("node %s epoch went from %d to %d at %s (it had %d)", e.Node, e.Prev, e.Epoch, h.rel(e.At), cur[e.Node])
			}
			cur[e.Node] = max(cur[e.Node], e.Epoch)
		case chaosJobStart:
			_, epoch, ok := jobRefParts(e.Job)
			if !ok {
				continue // reported under I1
			}
			if epoch < cur[e.Node] {
				add("node %s started job %s of epoch %d at %s, after it had seen epoch %d", e.Node, e.Job, epoch, h.rel(e.At), cur[e.Node])
			}
			if len(served) > 0 && !served[epoch] {
				add("node %s started job %s of epoch %d, which no scheduler served under", e.Node, e.Job, epoch)
			}
		}
	}
	for node, st := range h.Stats {
		if c, ok := cur[node]; ok && c != st.LeaderEpoch {
			add("node %s ended with epoch %d, its recorded changes with %d", node, st.LeaderEpoch, c)
		}
	}
	last := map[string]chaosEpochSample{}
	for _, s := range h.Epochs {
		if p, ok := last[s.Node]; ok && s.Epoch < p.Epoch {
			add("node %s epoch went down from %d (at %s) to %d (at %s)", s.Node, p.Epoch, h.rel(p.At), s.Epoch, h.rel(s.At))
		}
		last[s.Node] = s
	}
	return out
}

// summary describes the run in a few lines.
func (h *chaosHistory) summary() string {
	var b strings.Builder
	faults := map[string]int{}
	for _, f := range h.Faults {
		faults[f.Kind]++
	}
	fmt.Fprintf(&b, "seed %d, %s: faults", h.Seed, h.End.Sub(h.Start).Round(time.Second))
	for _, k := range slices.Sorted(maps.Keys(faults)) {
		fmt.Fprintf(&b, " %s=%d", k, faults[k])
	}
	acked := 0
	for _, s := range h.Submissions {
		if s.Acked {
			acked++
		}
	}
	states := map[string]int{}
	for _, op := range h.Listed {
		states[strings.TrimPrefix(op.GetState().String(), "OPERATION_STATE_")]++
	}
	fmt.Fprintf(&b, "\noperations: %d submitted, %d acknowledged, %d listed:", len(h.Submissions), acked, len(h.Listed))
	for _, k := range slices.Sorted(maps.Keys(states)) {
		fmt.Fprintf(&b, " %s=%d", k, states[k])
	}
	ends := map[string]int{}
	starts := 0
	for _, e := range h.Events {
		switch e.Kind {
		case chaosJobStart:
			starts++
		case chaosJobEnd:
			ends[strings.TrimPrefix(e.State, "JOB_STATE_")]++
		}
	}
	fmt.Fprintf(&b, "\njobs: %d started, ended:", starts)
	for _, k := range slices.Sorted(maps.Keys(ends)) {
		fmt.Fprintf(&b, " %s=%d", k, ends[k])
	}
	lost, serving := h.schedulerMarks()
	excused := map[string]int{}
	runs, _ := h.runs()
	for _, o := range h.concurrentAttempts(runs, lost, serving) {
		excused[strings.Fields(o.excuse + " none")[0]]++
	}
	fmt.Fprintf(&b, "\ntwo attempts of a job at once: %d after a node was lost, %d across a restart with the node impaired, %d unexcused",
		excused["node"], excused["restart"], excused["none"])
	var epochs []string
	for _, s := range serving {
		epochs = append(epochs, strconv.FormatUint(s.Epoch, 10))
	}
	fmt.Fprintf(&b, "\nscheduler processes %d, served under epochs [%s], nodes lost %d", len(h.Schedulers), strings.Join(epochs, " "), len(lost))
	for _, node := range slices.Sorted(maps.Keys(h.Stats)) {
		st := h.Stats[node]
		fmt.Fprintf(&b, "\n%s: started %d (duplicates ignored %d), completed %d, failed %d, aborted %d, over capacity %d, epoch %d, stale responses %d, stale signals %d",
			node, st.JobsStarted, st.DuplicateStarts, st.JobsCompleted, st.JobsFailed, st.JobsAborted, st.JobsOverCapacity, st.LeaderEpoch, st.StaleResponses, st.StaleSignals)
	}
	return b.String()
}

// TestChaosCheckerFindsViolations feeds the checker a small history that
// keeps every invariant, then variants of it that each break one: the
// checker must find exactly the broken ones.
func TestChaosCheckerFindsViolations(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	logLine := func(s float64, rest string) string {
		return "time=" + at(s).Format(time.RFC3339Nano) + " level=INFO " + rest
	}
	cpu := func(v float64) scheduler.Resources { return scheduler.Resources{scheduler.CPU: v} }
	completed := pb.JobState_JOB_STATE_COMPLETED.String()
	start := func(s float64, node, job string, alloc float64) chaosEvent {
		return chaosEvent{At: at(s), Node: node, Kind: chaosJobStart, Job: job, Op: strings.Split(job, ".")[0], Alloc: cpu(alloc)}
	}
	end := func(s float64, node, job string) chaosEvent {
		return chaosEvent{At: at(s), Node: node, Kind: chaosJobEnd, Job: job, State: completed}
	}
	stats := func(started, completed, epoch uint64) nodeagent.Stats {
		return nodeagent.Stats{JobsStarted: started, JobsCompleted: completed, LeaderEpoch: epoch}
	}
	// op1 has two jobs, run on n1 and n2 under epoch 1, and completes.
	base := func() *chaosHistory {
		return &chaosHistory{
			Seed: 42, Start: t0, End: at(10),
			Nodes: map[string]scheduler.Resources{"n1": cpu(2), "n2": cpu(2)},
			Events: []chaosEvent{
				start(1, "n1", "op1.0.0.0.1", 1), start(1, "n2", "op1.0.1.0.1", 1),
				end(2, "n1", "op1.0.0.0.1"), end(2, "n2", "op1.0.1.0.1"),
			},
			Epochs:      []chaosEpochSample{{At: at(0.5), Node: "n1", Epoch: 1}, {At: at(0.5), Node: "n2", Epoch: 1}},
			Submissions: []*chaosSubmission{{RequestID: "r1", Title: "t1", Jobs: 2, At: at(0.1), Acked: true, ID: "op1"}},
			Listed: []*pb.OperationStatus{{
				Id: "op1", RequestId: "r1", State: pb.OperationState_OPERATION_STATE_COMPLETED,
				Spec: &pb.OperationSpec{Title: "t1", Tasks: []*pb.TaskSpec{{Name: "main", JobCount: 2}}},
				Jobs: &pb.JobCounters{Completed: 2},
			}},
			Stats:      map[string]nodeagent.Stats{"n1": stats(1, 1, 1), "n2": stats(1, 1, 1)},
			Schedulers: [][]string{{logLine(0, `msg=serving nats_url=nats://127.0.0.1:4222 http="" epoch=1`)}},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(h *chaosHistory)
		want   []string // "I1: substring" of each violation, in order
	}{
		{"none", func(*chaosHistory) {}, nil},
		{"a job id started on two nodes", func(h *chaosHistory) {
			h.Events = append(h.Events, start(3, "n2", "op1.0.0.0.1", 1), end(4, "n2", "op1.0.0.0.1"))
			h.Stats["n2"] = stats(2, 2, 1)
		}, []string{"I1: job op1.0.0.0.1 started 2 times: n1 at +1.000s, n2 at +3.000s"}},
		{"a job id started twice on one node", func(h *chaosHistory) {
			h.Events = append(h.Events, start(3, "n1", "op1.0.0.0.1", 1), end(4, "n1", "op1.0.0.0.1"))
			h.Stats["n1"] = stats(2, 2, 1)
		}, []string{"I1: job op1.0.0.0.1 started 2 times: n1 at +1.000s, n1 at +3.000s"}},
		{"two attempts at once", func(h *chaosHistory) {
			h.Events = append(h.Events, start(1.5, "n2", "op1.0.0.1.1", 2), end(3, "n2", "op1.0.0.1.1"))
			h.Stats["n2"] = stats(2, 2, 1)
		}, []string{"I1: job op1.0.0 ran twice at once: op1.0.0.0.1 on n1 [+1.000s, +2.000s] and op1.0.0.1.1 on n2 [+1.500s, +3.000s]"}},
		{"two attempts at once, the first's node lost", func(h *chaosHistory) {
			h.Events = append(h.Events, start(1.5, "n2", "op1.0.0.1.1", 2), end(3, "n2", "op1.0.0.1.1"))
			h.Stats["n2"] = stats(2, 2, 1)
			h.Schedulers[0] = append(h.Schedulers[0], logLine(1.2, `level=WARN msg="node lost" node=n1 silent=4s jobs=1`))
		}, nil},
		{"two attempts at once across a restart, the first's node partitioned", func(h *chaosHistory) {
			h.Events = append(h.Events, chaosEvent{At: at(1.4), Node: "n2", Kind: chaosEpochChange, Epoch: 2, Prev: 1},
				start(1.5, "n2", "op1.0.0.0.2", 2), end(3, "n2", "op1.0.0.0.2"))
			h.Stats["n2"] = stats(2, 2, 2)
			h.Schedulers = append(h.Schedulers, []string{logLine(1.3, `msg=serving nats_url=nats://127.0.0.1:4222 http="" epoch=2`)})
			h.Faults = []chaosFault{{At: at(1.1), End: at(1.8), Kind: "partition", Target: "n1"}}
		}, nil},
		{"two attempts at once across a restart, the first's node fine", func(h *chaosHistory) {
			h.Events = append(h.Events, chaosEvent{At: at(1.4), Node: "n2", Kind: chaosEpochChange, Epoch: 2, Prev: 1},
				start(1.5, "n2", "op1.0.0.0.2", 2), end(3, "n2", "op1.0.0.0.2"))
			h.Stats["n2"] = stats(2, 2, 2)
			h.Schedulers = append(h.Schedulers, []string{logLine(1.3, `msg=serving nats_url=nats://127.0.0.1:4222 http="" epoch=2`)})
			h.Faults = []chaosFault{{At: at(1.1), End: at(1.8), Kind: "partition", Target: "n2"}}
		}, []string{"I1: job op1.0.0 ran twice at once"}},
		{"over capacity", func(h *chaosHistory) {
			h.Events[0].Alloc = cpu(3)
		}, []string{"I2: node n1 over capacity at +1.000s when job op1.0.0.0.1 started: its jobs hold {cpu: 3}, it has {cpu: 2}"}},
		{"over capacity, as the agent saw it", func(h *chaosHistory) {
			h.Events[1].Over = true
			h.Stats["n2"] = nodeagent.Stats{JobsStarted: 1, JobsCompleted: 1, LeaderEpoch: 1, JobsOverCapacity: 1}
		}, []string{"I2: node n2 over capacity at +1.000s when job op1.0.1.0.1", "I2: node n2 counted 1 jobs started beyond its capacity"}},
		{"an acknowledged operation missing", func(h *chaosHistory) {
			h.Listed = nil
		}, []string{`I3: acknowledged operation op1 ("t1", submitted at +0.100s) is not listed`}},
		{"an operation not terminal", func(h *chaosHistory) {
			h.Listed[0].State = pb.OperationState_OPERATION_STATE_RUNNING
		}, []string{"I3: operation op1 (acknowledged, submitted at +0.100s) still OPERATION_STATE_RUNNING at the end"}},
		{"an operation listed twice", func(h *chaosHistory) {
			h.Listed = append(h.Listed, h.Listed[0])
		}, []string{"I3: operation op1 listed twice"}},
		{"an operation nobody submitted", func(h *chaosHistory) {
			h.Listed = append(h.Listed, &pb.OperationStatus{Id: "op9", RequestId: "r9", State: pb.OperationState_OPERATION_STATE_COMPLETED, Spec: &pb.OperationSpec{Title: "t9"}})
		}, []string{`I3: operation op9 ("t9", request "r9") listed, but no such submission was made`}},
		{"one submission, two operations", func(h *chaosHistory) {
			h.Listed = append(h.Listed, &pb.OperationStatus{Id: "op2", RequestId: "r1", State: pb.OperationState_OPERATION_STATE_COMPLETED, Spec: &pb.OperationSpec{Title: "t1"}})
		}, []string{`I3: submission "t1" (request r1, at +0.100s) started two operations: op1 and op2`}},
		{"completed, with a job no node completed", func(h *chaosHistory) {
			h.Events[3].State = pb.JobState_JOB_STATE_ABORTED.String()
			h.Stats["n2"] = nodeagent.Stats{JobsStarted: 1, JobsAborted: 1, LeaderEpoch: 1}
		}, []string{"I3: operation op1 completed, but no node completed its job op1.0.1"}},
		{"failed without a reason", func(h *chaosHistory) {
			h.Listed[0].State = pb.OperationState_OPERATION_STATE_FAILED
		}, []string{"I3: operation op1 OPERATION_STATE_FAILED without a reason"}},
		{"a job of an older epoch started", func(h *chaosHistory) {
			h.Events = append([]chaosEvent{{At: at(0.8), Node: "n1", Kind: chaosEpochChange, Epoch: 2, Prev: 1}}, h.Events...)
			h.Stats["n1"] = stats(1, 1, 2)
			h.Schedulers = append(h.Schedulers, []string{logLine(0.7, `msg=serving nats_url=nats://127.0.0.1:4222 http="" epoch=2`)})
		}, []string{"I4: node n1 started job op1.0.0.0.1 of epoch 1 at +1.000s, after it had seen epoch 2"}},
		{"an epoch going down", func(h *chaosHistory) {
			h.Epochs = append(h.Epochs, chaosEpochSample{At: at(3), Node: "n2", Epoch: 0})
		}, []string{"I4: node n2 epoch went down from 1 (at +0.500s) to 0 (at +3.000s)"}},
		{"a panic", func(h *chaosHistory) {
			h.Schedulers[0] = append(h.Schedulers[0], "panic: runtime error: index out of range [3] with length 3")
		}, []string{"I5: scheduler process 1, stderr line 2: panic: runtime error"}},
		{"a scheduler ending on its own", func(h *chaosHistory) {
			h.Exits = []string{"scheduler process 1 ended on its own: exit status 1"}
		}, []string{"I5: scheduler process 1 ended on its own"}},
		{"an end without a start", func(h *chaosHistory) {
			h.Events = append(h.Events, end(5, "n1", "op1.0.0.3.1"))
			h.Stats["n1"] = stats(1, 2, 1)
		}, []string{"H: job op1.0.0.3.1 ended on n1 at +5.000s without a recorded start"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := base()
			tc.change(h)
			got := checkChaosHistory(h)
			ok := len(got) == len(tc.want)
			for i := range got {
				ok = ok && i < len(tc.want) && strings.Contains(got[i].String(), tc.want[i])
			}
			if !ok {
				var lines []string
				for _, v := range got {
					lines = append(lines, v.String())
				}
				t.Errorf("violations:\n%s\nwant, in order, ones containing:\n%s", strings.Join(lines, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
