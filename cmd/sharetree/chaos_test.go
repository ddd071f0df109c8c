package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/testutil"
	"github.com/sharetree/sharetree/internal/testutil/servertest"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/nodeagent"
	"github.com/sharetree/sharetree/scheduler"
)

// The chaos test's knobs (reliability test 25): how long the faults go on
// (a Go duration; default 30s, an hour in CI's soak, a day nightly), and
// the seed of every fault decision (default: from the time; always
// logged, so that a failing run's schedule can be replayed).
const (
	chaosDurationEnv = "SHARETREE_CHAOS_DURATION"
	chaosSeedEnv     = "SHARETREE_CHAOS_SEED"
)

// chaosNodes are the nodes' capacities: 19 CPUs in all, for a workload
// that asks for more (jobs queue).
var chaosNodes = []scheduler.Resources{
	{scheduler.CPU: 4, scheduler.Memory: 8, scheduler.UserSlots: 4},
	{scheduler.CPU: 4, scheduler.Memory: 8, scheduler.UserSlots: 4},
	{scheduler.CPU: 2, scheduler.Memory: 4, scheduler.UserSlots: 2},
	{scheduler.CPU: 6, scheduler.Memory: 12, scheduler.UserSlots: 6},
	{scheduler.CPU: 3, scheduler.Memory: 6, scheduler.UserSlots: 3},
}

const chaosTrees = `version: 1
trees:
  - name: physical
    config: {fair_share_update_period: 50ms}
    pools:
      - {name: a, weight: 3}
      - {name: b, weight: 1}
      - {name: c, max_running_operation_count: 2}
`

// The scheduler's node offline and lost timeouts: short, so that a run of
// seconds has partitions shorter than the first, between the two, and
// longer than the second, and a lost node may still run jobs (of up to
// 2 s) that the scheduler runs again elsewhere. And its leader lease: a
// lease of 3s is given up after 2s unrenewed, so that the longest pauses
// cost the scheduler its leadership (it stands by, and serves again under
// a new epoch, in the same process).
const (
	chaosOffline       = 500 * time.Millisecond
	chaosLost          = 1200 * time.Millisecond
	chaosLeaseTTL      = 3 * time.Second
	chaosLeaseDeadline = chaosLeaseTTL * 2 / 3
)

// chaosMaxBacklog: submitters wait while this many operations are pending
// or running, so that the queue stays full without growing for ever
// (and the run drains in seconds once the faults stop).
const chaosMaxBacklog = 30

// TestChaos (reliability test 25, soak and chaos): a scheduler process
// and five node agents, each agent behind a fault-injecting proxy, run a
// continuous workload while faults chosen by a seeded generator hit them
// one at a time: the scheduler killed (SIGKILL) and started again on its
// store, paused (SIGSTOP) for less than the node offline timeout, up to
// the lost timeout, or past its lease's deadline, an agent partitioned
// away for less than the offline timeout, between it and the lost
// timeout, or longer, and one or all agents' bytes delayed by 100 ms ±
// 50 ms (see chaosProxy for why nothing is duplicated). Then
// the faults stop, every acknowledged operation must end, and the
// recorded history must keep invariants I1–I5 (see checkChaosHistory).
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a scheduler process under faults for " + chaosDurationEnv + " (default 30s)")
	}
	duration := 30 * time.Second
	if v := os.Getenv(chaosDurationEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a positive Go duration such as 30s, 5m or 24h", chaosDurationEnv, v)
		}
		duration = d
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(chaosSeedEnv); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an unsigned integer", chaosSeedEnv, v)
		}
		seed = s
	}
	t.Logf("chaos for %s with seed %d (replay: %s=%d %s=%s)", duration, seed, chaosSeedEnv, seed, chaosDurationEnv, duration)

	rec := &chaosRecorder{}
	rec.h.Seed, rec.h.Start, rec.h.Nodes = seed, time.Now(), map[string]scheduler.Resources{}
	since := func() string { return fmt.Sprintf("+%6.2fs", time.Since(rec.h.Start).Seconds()) }

	port := freePort(t)
	sched := &chaosScheduler{args: []string{"server",
		"--data-dir", t.TempDir(), "--port", strconv.Itoa(port), "--http-addr", "",
		"--pools", writeFile(t, "trees.yaml", chaosTrees),
		"--heartbeat-period", "50ms", "--job-revival-timeout", "1s",
		"--lease-ttl", chaosLeaseTTL.String(), "--log-level", "info",
		"--node-offline-timeout", chaosOffline.String(), "--node-lost-timeout", chaosLost.String()}}
	t.Cleanup(sched.stop)
	sched.start(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)

	// The agents, each behind its own proxy.
	var agents []*chaosAgent
	for i, res := range chaosNodes {
		id := fmt.Sprintf("node-%d", i)
		rec.h.Nodes[id] = res
		agents = append(agents, startChaosAgent(t, id, res, startChaosProxy(t, id, fmt.Sprintf("127.0.0.1:%d", port)), rec))
	}

	// The samplers of the agents' epochs, and of the backlog.
	ctx, stopBackground := context.WithCancel(t.Context())
	var background sync.WaitGroup
	t.Cleanup(func() { stopBackground(); background.Wait() })
	background.Go(func() { sampleEpochs(ctx, agents, rec) })
	var backlog atomic.Int64
	monitor := chaosClient(t, url)
	background.Go(func() {
		for {
			ops, err := monitor.List(ctx, &pb.ListOperationsRequest{States: []pb.OperationState{
				pb.OperationState_OPERATION_STATE_PENDING, pb.OperationState_OPERATION_STATE_RUNNING}})
			if err == nil {
				backlog.Store(int64(len(ops)))
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	})

	// The submitters.
	subCtx, stopSubmitting := context.WithCancel(ctx)
	var submitters sync.WaitGroup
	t.Cleanup(func() { stopSubmitting(); submitters.Wait() })
	for i := range 3 {
		cl := chaosClient(t, url)
		rng := rand.New(rand.NewPCG(seed, uint64(i)+1))
		submitters.Go(func() { submitLoop(subCtx, i, cl, rng, rec, &backlog) })
	}
	testutil.WaitFor(t, 30*time.Second, "the first jobs to start", func() bool {
		for _, a := range agents {
			if a.agent.Stats().JobsStarted > 0 {
				return true
			}
		}
		return false
	})

	// The faults, one at a time.
	c := &chaosLoop{t: t, rng: rand.New(rand.NewPCG(seed, 0x6368616f73)), sched: sched, agents: agents, rec: rec,
		maxFault: max(duration/4, 3*time.Second), since: since}
	for end := time.Now().Add(duration); time.Now().Before(end); {
		c.gap()
		c.fault()
	}
	sched.ensureRunning(t)
	t.Logf("%s faults over; draining", since())

	// Drain: every operation ends (the acknowledged ones must), and the
	// agents finish and report every job.
	stopSubmitting()
	submitters.Wait()
	final := chaosClient(t, url)
	var listed []*pb.OperationStatus
	nextList := time.Now()
	drained := testutil.Poll(3*time.Minute, func() bool {
		if time.Now().Before(nextList) {
			return false
		}
		nextList = time.Now().Add(250 * time.Millisecond)
		lctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		ops, err := final.List(lctx, &pb.ListOperationsRequest{})
		if err != nil {
			return false
		}
		listed = ops
		states := map[string]pb.OperationState{}
		for _, op := range ops {
			states[op.GetId()] = op.GetState()
			if !terminalStates[op.GetState()] {
				return false
			}
		}
		for _, id := range rec.ackedIDs() {
			if !terminalStates[states[id]] {
				return false
			}
		}
		return true
	})
	if !drained {
		t.Errorf("seed %d: the operations did not all end within 3 minutes of the last fault (see I3 below)", seed)
	}
	if !testutil.Poll(time.Minute, func() bool {
		for _, a := range agents {
			if st := a.agent.Stats(); st.RunningJobs > 0 || st.UnackedFinishedJobs > 0 {
				return false
			}
		}
		return true
	}) {
		for _, a := range agents {
			st := a.agent.Stats()
			t.Logf("%s still runs %d jobs and holds %d unacknowledged", a.id, st.RunningJobs, st.UnackedFinishedJobs)
		}
	}
	stopBackground()
	background.Wait()
	rec.h.Stats = map[string]nodeagent.Stats{}
	for _, a := range agents {
		a.stop()
		rec.h.Stats[a.id] = a.agent.Stats()
	}
	rec.h.End = time.Now()
	sched.stop()

	rec.mu.Lock()
	h := rec.h
	rec.mu.Unlock()
	h.Listed = listed
	h.Schedulers, h.Exits = sched.logs()
	t.Logf("summary:\n%s", h.summary())
	violations := checkChaosHistory(&h)
	for i, v := range violations {
		if i == 100 {
			t.Errorf("seed %d: ... and %d more violations", seed, len(violations)-i)
			break
		}
		t.Errorf("seed %d: %s", seed, v)
	}
	if len(violations) > 0 {
		t.Logf("replay with %s=%d %s=%s; the faults were:", chaosSeedEnv, seed, chaosDurationEnv, duration)
		for _, f := range h.Faults {
			t.Logf("  %s %s %s until %s %s", h.rel(f.At), f.Kind, f.Target, h.rel(f.End), f.Detail)
		}
	}
}

// chaosClient is a client connected straight to the scheduler's port,
// reconnecting for ever; it is closed when the test ends.
func chaosClient(t *testing.T, url string) *client.Client {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return client.New(nc, 2*time.Second)
}

// submitLoop submits operations of 1 to 4 simulated jobs of 100 ms to 2 s
// until ctx ends, recording every try and every acknowledgement.
func submitLoop(ctx context.Context, i int, cl *client.Client, rng *rand.Rand, rec *chaosRecorder, backlog *atomic.Int64) {
	pools := []string{"a", "b", "c"}
	for n := 0; ; n++ {
		wait := time.Duration(20+rng.IntN(180)) * time.Millisecond
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			if backlog.Load() < chaosMaxBacklog {
				break
			}
			wait = 50 * time.Millisecond
		}
		spec := &pb.OperationSpec{Title: fmt.Sprintf("chaos-%d-%d", i, n), Pool: pools[rng.IntN(len(pools))]}
		jobs := 1 + rng.IntN(4)
		for left := jobs; left > 0; {
			k := 1 + rng.IntN(left)
			left -= k
			spec.Tasks = append(spec.Tasks, &pb.TaskSpec{
				Name: fmt.Sprintf("t%d", len(spec.Tasks)), JobCount: int32(k),
				JobResources: &pb.Resources{Cpu: float64(1 + rng.IntN(2)), Memory: float64(1 + rng.IntN(3)), UserSlots: 1},
				Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(
					time.Duration(100+rng.IntN(1901)) * time.Millisecond)},
			})
		}
		s := &chaosSubmission{RequestID: client.NewRequestID(), Title: spec.Title, Jobs: jobs, At: time.Now()}
		rec.submission(s)
		if id, err := cl.SubmitRequest(ctx, spec, s.RequestID); err == nil {
			rec.acked(s, id)
		}
	}
}

// sampleEpochs records each agent's highest leader epoch whenever it is
// seen to change, until ctx ends.
func sampleEpochs(ctx context.Context, agents []*chaosAgent, rec *chaosRecorder) {
	last := map[string]uint64{}
	for {
		for _, a := range agents {
			e := a.agent.Stats().LeaderEpoch
			if old, ok := last[a.id]; !ok || e != old {
				rec.epochSample(chaosEpochSample{At: time.Now(), Node: a.id, Epoch: e})
				last[a.id] = e
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// chaosLoop makes the faults.
type chaosLoop struct {
	t        *testing.T
	rng      *rand.Rand
	sched    *chaosScheduler
	agents   []*chaosAgent
	rec      *chaosRecorder
	maxFault time.Duration // the longest partition or pause
	since    func() string
}

// gap waits between two faults: 0.3 to 2 s.
func (c *chaosLoop) gap() {
	c.hold(300*time.Millisecond + c.randIn(0, 1700*time.Millisecond))
}

// hold waits d, or until the test ends.
func (c *chaosLoop) hold(d time.Duration) {
	select {
	case <-time.After(d):
	case <-c.t.Context().Done():
	}
}

// randIn is a duration in [lo, hi].
func (c *chaosLoop) randIn(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(c.rng.Int64N(int64(hi-lo)+1))
}

// lengthClass picks a fault's length from one of the classes that fit
// within maxFault.
func (c *chaosLoop) lengthClass(classes [][2]time.Duration, names []string) (time.Duration, string) {
	var fit []int
	for i, cl := range classes {
		if cl[0] <= c.maxFault && cl[0] <= cl[1] {
			fit = append(fit, i)
		}
	}
	i := fit[c.rng.IntN(len(fit))]
	return c.randIn(classes[i][0], min(classes[i][1], c.maxFault)), names[i]
}

func (c *chaosLoop) fault() {
	t, off, lost := c.t, chaosOffline, chaosLost
	c.sched.ensureRunning(t)
	f := chaosFault{At: time.Now()}
	switch k := c.rng.IntN(10); {
	case k < 2:
		f.Kind, f.Target = "kill", "scheduler"
		down := c.randIn(0, time.Second)
		f.Detail = fmt.Sprintf("down %s", down.Round(time.Millisecond))
		t.Logf("%s chaos: kill the scheduler, start it again after %s", c.since(), f.Detail)
		c.sched.kill(t)
		c.hold(down)
		c.sched.ensureRunning(t)
		f.Detail += fmt.Sprintf(", serving again under epoch %d", c.sched.epoch())
	case k < 4:
		f.Kind, f.Target = "pause", "scheduler"
		d, class := c.lengthClass([][2]time.Duration{
			{100 * time.Millisecond, off * 8 / 10},
			{off * 12 / 10, lost * 8 / 10},
			// The scheduler hears from no node for longer than the lost
			// timeout, and gives up its lease.
			{chaosLeaseDeadline + 100*time.Millisecond, chaosLeaseDeadline * 3 / 2},
		}, []string{"shorter than the offline timeout", "between the offline and the lost timeouts", "longer than the lease deadline"})
		f.Detail = fmt.Sprintf("%s, %s", d.Round(time.Millisecond), class)
		t.Logf("%s chaos: pause the scheduler for %s", c.since(), f.Detail)
		c.sched.signal(t, syscall.SIGSTOP)
		c.hold(d)
		c.sched.signal(t, syscall.SIGCONT)
	case k < 7:
		a := c.agents[c.rng.IntN(len(c.agents))]
		blackhole := c.rng.IntN(2) == 0
		d, class := c.lengthClass([][2]time.Duration{
			{100 * time.Millisecond, off * 8 / 10},
			{off * 12 / 10, lost * 8 / 10},
			{lost * 12 / 10, lost * 4},
		}, []string{"shorter than the offline timeout", "between the offline and the lost timeouts", "longer than the lost timeout"})
		mode := "refusing new connections"
		if blackhole {
			mode = "blackholing new connections"
		}
		f.Kind, f.Target, f.Detail = "partition", a.id, fmt.Sprintf("%s, %s, %s", d.Round(time.Millisecond), class, mode)
		t.Logf("%s chaos: partition %s for %s", c.since(), a.id, f.Detail)
		a.proxy.partition(blackhole)
		c.hold(d)
		a.proxy.heal()
	default:
		targets := []*chaosAgent{c.agents[c.rng.IntN(len(c.agents))]}
		f.Target = targets[0].id
		if c.rng.IntN(3) == 0 {
			targets, f.Target = c.agents, "all"
		}
		d := c.randIn(time.Second, min(5*time.Second, c.maxFault))
		f.Kind, f.Detail = "delay", fmt.Sprintf("%s, every chunk by %s ± %s", d.Round(time.Millisecond), chaosDelay, chaosJitter)
		t.Logf("%s chaos: delay %s for %s", c.since(), f.Target, f.Detail)
		for _, a := range targets {
			a.proxy.setDelay(true, c.rng.Uint64())
		}
		c.hold(d)
		for _, a := range targets {
			a.proxy.setDelay(false, 0)
		}
	}
	f.End = time.Now()
	c.rec.fault(f)
}

// chaosAgent is an in-process node agent connected through its proxy.
type chaosAgent struct {
	id    string
	proxy *chaosProxy
	agent *nodeagent.Agent
	stop  func() // stops the agent and closes its connection; idempotent
}

func startChaosAgent(t *testing.T, id string, res scheduler.Resources, proxy *chaosProxy, rec *chaosRecorder) *chaosAgent {
	t.Helper()
	// The agent reconnects to its proxy for ever, every 20ms, whatever
	// happens behind it.
	nc, err := nats.Connect(proxy.url(), nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond), nats.Timeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	cfg := nodeagent.DefaultConfig(id, res)
	cfg.HeartbeatPeriod, cfg.HeartbeatTimeout, cfg.WorkDir = 50*time.Millisecond, time.Second, t.TempDir()
	cfg.OnJobStart = func(js nodeagent.JobStart) {
		rec.event(chaosEvent{At: time.Now(), Node: id, Kind: chaosJobStart, Job: js.ID, Op: js.OperationID, Alloc: js.Allocated, Over: js.OverCapacity})
	}
	cfg.Logger = slog.New(&chaosAgentLog{node: id, rec: rec})
	a := &chaosAgent{id: id, proxy: proxy}
	a.agent, a.stop = servertest.RunAgent(t, nc, cfg)
	return a
}

// chaosAgentLog records, from an agent's log, its job ends and its epoch
// changes: the agent logs them with its lock held, as it calls OnJobStart,
// so the recorder has each agent's events in the order they happened.
type chaosAgentLog struct {
	node string
	rec  *chaosRecorder
}

func (l *chaosAgentLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *chaosAgentLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *chaosAgentLog) WithGroup(string) slog.Handler            { return l }

func (l *chaosAgentLog) Handle(_ context.Context, r slog.Record) error {
	attrs := map[string]slog.Value{}
	r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.Resolve(); return true })
	switch r.Message {
	case "job finished":
		l.rec.event(chaosEvent{At: time.Now(), Node: l.node, Kind: chaosJobEnd, Job: attrs["job"].String(), State: fmt.Sprint(attrs["state"].Any())})
	case "new scheduler leader epoch":
		l.rec.event(chaosEvent{At: time.Now(), Node: l.node, Kind: chaosEpochChange, Epoch: attrs["epoch"].Uint64(), Prev: attrs["previous"].Uint64()})
	}
	return nil
}

// chaosScheduler is `sharetree server` in a child process, started again
// after each kill on the same arguments; unlike childScheduler it keeps
// each process's whole stderr.
type chaosScheduler struct {
	args  []string
	mu    sync.Mutex
	procs []*chaosProc
}

type chaosProc struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	serving chan uint64 // the epoch of each "serving" line
	killed  atomic.Bool // by the test
	mu      sync.Mutex
	lines   []string
	epoch   uint64 // of the last "serving" line taken
}

func (s *chaosScheduler) current() *chaosProc {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.procs) == 0 {
		return nil
	}
	return s.procs[len(s.procs)-1]
}

func (s *chaosScheduler) epoch() uint64 {
	p := s.current()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.epoch
}

// start starts a process and waits until it serves.
func (s *chaosScheduler) start(t *testing.T) {
	t.Helper()
	argv, err := json.Marshal(s.args)
	if err != nil {
		t.Fatal(err)
	}
	p := &chaosProc{exited: make(chan struct{}), serving: make(chan uint64, 16)}
	p.cmd = exec.Command(os.Args[0], "-test.run", "^$")
	p.cmd.Env = append(os.Environ(), childArgsEnv+"="+string(argv))
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.procs = append(s.procs, p)
	s.mu.Unlock()
	go func() {
		defer close(p.exited)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.lines = append(p.lines, line)
			p.mu.Unlock()
			if m := servingLine.FindStringSubmatch(line); m != nil {
				e, _ := strconv.ParseUint(m[2], 10, 64)
				select {
				case p.serving <- e:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = p.cmd.Wait()
	}()
	select {
	case e := <-p.serving:
		p.mu.Lock()
		p.epoch = e
		p.mu.Unlock()
	case <-p.exited:
		t.Fatalf("the scheduler exited before serving:\n%s", p.tail(50))
	case <-time.After(time.Minute):
		t.Fatalf("the scheduler did not serve within a minute:\n%s", p.tail(50))
	}
}

func (p *chaosProc) tail(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines[max(0, len(p.lines)-n):], "\n")
}

// kill ends the current process with SIGKILL and waits for it.
func (s *chaosScheduler) kill(t *testing.T) {
	t.Helper()
	p := s.current()
	p.killed.Store(true)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !strings.Contains(err.Error(), "finished") {
		t.Errorf("kill the scheduler: %v", err)
	}
	<-p.exited
}

// signal sends sig to the current process.
func (s *chaosScheduler) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := s.current().cmd.Process.Signal(sig); err != nil && !strings.Contains(err.Error(), "finished") {
		t.Errorf("signal the scheduler: %v", err)
	}
}

// ensureRunning starts a process again when the current one ended: killed
// by the test, or on its own (then the checker reports it, under I5).
func (s *chaosScheduler) ensureRunning(t *testing.T) {
	t.Helper()
	p := s.current()
	select {
	case <-p.exited:
	default:
		return
	}
	if !p.killed.Load() {
		t.Logf("the scheduler ended on its own (%v); starting it again:\n%s", p.cmd.ProcessState, p.tail(20))
	}
	s.start(t)
}

// stop ends the current process, with SIGTERM (its shutdown is logged
// too), then SIGKILL if it lingers; idempotent.
func (s *chaosScheduler) stop() {
	p := s.current()
	if p == nil {
		return
	}
	select {
	case <-p.exited:
		return
	default:
	}
	p.killed.Store(true)
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
	}
}

// logs returns every process's stderr, and how each one that the test did
// not end ended.
func (s *chaosScheduler) logs() (all [][]string, exits []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.procs {
		<-p.exited
		p.mu.Lock()
		all = append(all, append([]string(nil), p.lines...))
		p.mu.Unlock()
		if !p.killed.Load() {
			exits = append(exits, fmt.Sprintf("scheduler process %d ended on its own: %v", i+1, p.cmd.ProcessState))
		}
	}
	return all, exits
}
