package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/internal/server"
	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// ErrRun is wrapped when a run cannot start or its scheduler fails.
var ErrRun = errors.New("loadgen: run failed")

// TreeName is the pool tree of the embedded scheduler.
const TreeName = "load"

// bucket is the resolution of the job-start and utilisation time series.
const bucket = 100 * time.Millisecond

// fillFraction of the slots running marks the end of the initial fill.
const fillFraction = 0.95

// maxErrorKinds bounds the distinct heartbeat errors kept.
const maxErrorKinds = 10

// runner is one run's shared state. The counters are updated by every
// shard's goroutines; "Win" counters only for events in the window.
type runner struct {
	cfg         Config
	log         *slog.Logger
	incarnation string
	limits      *pb.Resources

	t0, winStart, end time.Time // end is the end of the window

	sentWin, answeredWin, failedWin, timeoutsWin, skippedWin atomic.Uint64
	late, stale, signals, badSignals                         atomic.Uint64
	startsAll, startsWin, duplicates, aborted, interrupted   atomic.Uint64
	finished                                                 atomic.Uint64
	running                                                  atomic.Int64
	starts                                                   []atomic.Uint64 // per bucket since t0

	errMu sync.Mutex
	errs  map[string]uint64
}

func (r *runner) inWindow(t time.Time) bool { return !t.Before(r.winStart) && t.Before(r.end) }

func (r *runner) sent(at time.Time) {
	if r.inWindow(at) {
		r.sentWin.Add(1)
	}
}

func (r *runner) skipped(at time.Time) {
	if r.inWindow(at) {
		r.skippedWin.Add(1)
	}
}

func (r *runner) timedOut(sentAt time.Time) {
	if r.inWindow(sentAt) {
		r.timeoutsWin.Add(1)
		r.failed(sentAt, errors.New("no response before the heartbeat timeout"))
	}
}

func (r *runner) failed(at time.Time, err error) {
	if !r.inWindow(at) {
		return
	}
	r.failedWin.Add(1)
	r.errMu.Lock()
	defer r.errMu.Unlock()
	msg := err.Error()
	if _, ok := r.errs[msg]; ok || len(r.errs) < maxErrorKinds {
		r.errs[msg]++
	}
}

func (r *runner) answered(sentAt, now time.Time, o outcome) {
	if o.stale {
		r.stale.Add(1)
	}
	if r.inWindow(sentAt) {
		r.answeredWin.Add(1)
	}
	r.duplicates.Add(uint64(o.duplicates))
	r.aborted.Add(uint64(o.aborted))
	r.interrupted.Add(uint64(o.interrupted))
	if o.started == 0 {
		return
	}
	n := uint64(o.started)
	r.startsAll.Add(n)
	if r.inWindow(now) {
		r.startsWin.Add(n)
	}
	if i := int(now.Sub(r.t0) / bucket); i >= 0 && i < len(r.starts) {
		r.starts[i].Add(n)
	}
}

func (r *runner) jobStarted() { r.running.Add(1) }

func (r *runner) jobDone() {
	r.running.Add(-1)
	r.finished.Add(1)
}

// Run submits the operations, runs the agents for Warmup + Duration and
// reports. It starts an embedded scheduler unless cfg.NATSURL is set. When
// ctx ends early the report covers what was measured (Interrupted set) and
// the error is nil.
func Run(ctx context.Context, cfg Config) (Report, error) {
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	log := cfg.Logger
	rep := Report{
		Mode: "external", NATSURL: cfg.NATSURL, Agents: cfg.Agents, Connections: cfg.Connections(),
		NodeResources: cfg.NodeResources.String(), JobResources: cfg.JobResources.String(),
		SlotsPerNode: cfg.SlotsPerNode(), Slots: cfg.Agents * cfg.SlotsPerNode(),
		Operations: cfg.Operations, Pools: cfg.Pools, JobsPerOperation: cfg.jobsPerOperation(),
		HeartbeatPeriod: cfg.HeartbeatPeriod.Seconds(), JobDuration: cfg.JobDuration.Seconds(),
		Warmup: cfg.Warmup.Seconds(), Duration: cfg.Duration.Seconds(),
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	url := cfg.NATSURL
	var updates func() (actors.UpdateStats, bool) // the embedded scheduler's
	var nodes func() *NodeStats                   // the embedded scheduler's
	if cfg.ServerPID > 0 {
		rep.Mode = "process"
		rep.SyncAlways = &cfg.SyncAlways // the flags it was started with
	}
	if url == "" {
		rep.Mode, rep.SyncAlways = "embedded", &cfg.SyncAlways
		srv, cleanup, err := startScheduler(ctx, &cfg, -1)
		if err != nil {
			return rep, err
		}
		defer cleanup()
		url = srv.URL()
		updates = func() (actors.UpdateStats, bool) {
			in, err := srv.System().Introspect(TreeName, actors.Scope{})
			if err != nil {
				log.Warn("fair-share counters unavailable", "err", err)
				return actors.UpdateStats{}, false
			}
			in.Release()
			return in.Updates, true
		}
		nodes = func() *NodeStats {
			off, lost := srv.System().NodeTransitions()
			return &NodeStats{Sessions: srv.System().NodeCount(), WentOffline: off, Lost: lost}
		}
		go func() {
			select {
			case err := <-srv.Fatal():
				cancel(fmt.Errorf("%w: embedded scheduler: %w", ErrRun, err))
			case <-ctx.Done():
			}
		}()
	}

	r := &runner{cfg: cfg, log: log, incarnation: fmt.Sprintf("load-%d", time.Now().UnixNano()),
		limits: wire.ToResources(cfg.NodeResources), errs: map[string]uint64{}}
	shards := make([]*shard, 0, cfg.Connections())
	defer func() {
		for _, s := range shards {
			s.close(cfg.HeartbeatTimeout)
		}
	}()
	for i := range cfg.Connections() {
		closed := make(chan struct{})
		nc, err := nats.Connect(url, nats.Name(fmt.Sprintf("sharetree-load-%d", i)), nats.MaxReconnects(-1),
			nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
		if err != nil {
			return rep, fmt.Errorf("%w: connect to NATS at %s: %w", ErrRun, url, err)
		}
		shards = append(shards, newShard(r, nc, closed))
	}
	for i := range cfg.Agents {
		phase := time.Duration(int64(i) * int64(cfg.HeartbeatPeriod) / int64(cfg.Agents))
		if err := shards[i%len(shards)].add(cfg.nodeID(i), phase); err != nil {
			return rep, fmt.Errorf("%w: %w", ErrRun, err)
		}
	}
	for _, s := range shards {
		if err := s.subscribe(); err != nil {
			return rep, fmt.Errorf("%w: %w", ErrRun, err)
		}
	}

	rep.Submit = submit(ctx, &cfg, shards, rep.JobsPerOperation)
	if rep.Submit.Submitted == 0 {
		if err := context.Cause(ctx); err != nil && ctx.Err() != nil {
			return rep, err
		}
		return rep, fmt.Errorf("%w: no operation was accepted: %s", ErrRun, rep.Submit.FirstError)
	}
	log.Info("operations submitted", "submitted", rep.Submit.Submitted, "refused", rep.Submit.Refused,
		"seconds", rep.Submit.Seconds, "jobs_per_operation", rep.JobsPerOperation)

	r.t0 = time.Now().Add(50 * time.Millisecond)
	r.winStart = r.t0.Add(cfg.Warmup)
	r.end = r.winStart.Add(cfg.Duration)
	r.starts = make([]atomic.Uint64, int((cfg.Warmup+cfg.Duration+cfg.HeartbeatTimeout)/bucket)+2)
	log.Info("agents starting", "agents", cfg.Agents, "connections", len(shards), "warmup", cfg.Warmup, "duration", cfg.Duration)

	smp := &sampler{r: r, profile: cfg.CPUProfile, memProfile: cfg.MemProfile, heapProfile: cfg.HeapProfile, trace: cfg.Trace, updates: updates, nodes: nodes}
	smpDone := make(chan struct{})
	go func() { defer close(smpDone); smp.run(ctx) }()
	var wg sync.WaitGroup
	for _, s := range shards {
		wg.Go(func() { s.drive(ctx) })
	}
	wg.Wait()
	<-smpDone
	stopped := time.Now()
	if ctx.Err() != nil {
		if err := context.Cause(ctx); !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			return rep, err
		}
		rep.Interrupted = true
	}

	// Let the heartbeats in flight come back (they belong to the window).
	deadline := time.Now().Add(cfg.HeartbeatTimeout)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		n := 0
		for _, s := range shards {
			n += s.inflight()
		}
		if n == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, s := range shards {
		s.abandon()
	}
	closed := shards
	shards = nil // closed here, not again by the deferred close
	for _, s := range closed {
		s.close(cfg.HeartbeatTimeout)
	}
	r.fill(&rep, smp, closed, stopped)
	if smp.err != nil {
		return rep, fmt.Errorf("%w: %w", ErrRun, smp.err)
	}
	return rep, nil
}

// Serve runs the scheduler Run would embed (cfg's tree, pools and heartbeat
// period; DataDir or a temporary directory) with its NATS server on port
// (-1: any free port) until ctx ends, for a Run in another process
// (NATSURL, ServerPID) whose generator then does not share this process's
// CPU and Go runtime. ready receives the NATS URL once it serves. When ctx
// ends, cfg.HeapProfile (when set) receives the in-use heap, before the
// scheduler stops.
func Serve(ctx context.Context, cfg Config, port int, ready func(url string)) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	srv, cleanup, err := startScheduler(ctx, &cfg, port)
	if err != nil {
		return err
	}
	defer cleanup()
	ready(srv.URL())
	select {
	case <-ctx.Done():
		if cfg.HeapProfile != nil {
			if err := writeHeapProfile(cfg.HeapProfile); err != nil {
				return fmt.Errorf("%w: heap profile: %w", ErrRun, err)
			}
		}
		return nil
	case err := <-srv.Fatal():
		return fmt.Errorf("%w: scheduler: %w", ErrRun, err)
	}
}

// startScheduler starts the embedded scheduler and returns it with its
// cleanup.
func startScheduler(ctx context.Context, cfg *Config, port int) (*server.Server, func(), error) {
	dir, removeDir := cfg.DataDir, func() {}
	if dir == "" {
		d, err := os.MkdirTemp("", "sharetree-load-*")
		if err != nil {
			return nil, nil, fmt.Errorf("%w: data dir: %w", ErrRun, err)
		}
		dir, removeDir = d, func() { _ = os.RemoveAll(d) }
	}
	scfg := server.DefaultConfig()
	scfg.DataDir = dir
	scfg.SyncAlways = cfg.SyncAlways
	scfg.Port = port
	scfg.Logger = cfg.Logger
	scfg.Trees = EmbeddedTrees(cfg)
	scfg.Actors.HeartbeatPeriod = cfg.HeartbeatPeriod
	scfg.Actors.JournalBatchInterval = cfg.JournalBatchInterval
	scfg.Actors.MaxHeartbeatPasses = cfg.MaxHeartbeatPasses
	srv, err := server.Start(ctx, scfg)
	if err != nil {
		removeDir()
		return nil, nil, fmt.Errorf("%w: start the scheduler: %w", ErrRun, err)
	}
	cfg.Logger.Info("embedded scheduler started", "nats_url", srv.URL(), "data_dir", dir)
	return srv, func() { srv.Close(); removeDir() }, nil
}

// EmbeddedTrees is the pool tree the embedded scheduler runs: tree "load"
// with the reference's defaults (and Config.FairShareUpdatePeriod), pools
// "load-0" … "load-<Pools-1>", and operation-count limits raised so that
// every operation runs.
func EmbeddedTrees(cfg *Config) *scenario.TreesFile {
	tc := scheduler.DefaultTreeConfig()
	if cfg.FairShareUpdatePeriod > 0 {
		tc.FairShareUpdatePeriod = cfg.FairShareUpdatePeriod
	}
	perPool := cfg.Operations
	if cfg.Pools > 0 {
		perPool = (cfg.Operations + cfg.Pools - 1) / cfg.Pools
	}
	tc.MaxOperationCount = max(tc.MaxOperationCount, cfg.Operations)
	tc.MaxRunningOperationCount = max(tc.MaxRunningOperationCount, cfg.Operations)
	tc.MaxOperationCountPerPool = max(tc.MaxOperationCountPerPool, perPool)
	tc.MaxRunningOperationCountPerPool = max(tc.MaxRunningOperationCountPerPool, perPool)
	pools := make([]scheduler.PoolConfig, cfg.Pools)
	for i := range pools {
		pools[i] = scheduler.PoolConfig{Name: scheduler.PoolID(cfg.poolName(i))}
	}
	return &scenario.TreesFile{DefaultTree: TreeName, Trees: []scenario.TreeSpec{{Name: TreeName, Config: tc, Pools: pools}}}
}

// submit submits the operations, SubmitConcurrency at a time, over the
// shards' connections.
func submit(ctx context.Context, cfg *Config, shards []*shard, jobs int) SubmitStats {
	var (
		st   SubmitStats
		mu   sync.Mutex
		next atomic.Int64
		wg   sync.WaitGroup
	)
	res := wire.ToResources(cfg.JobResources)
	start := time.Now()
	for w := range min(cfg.SubmitConcurrency, cfg.Operations) {
		c := client.New(shards[w%len(shards)].nc, 30*time.Second)
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= cfg.Operations || ctx.Err() != nil {
					return
				}
				spec := &pb.OperationSpec{
					Pool:  cfg.poolName(i),
					Title: fmt.Sprintf("load %d", i),
					Tasks: []*pb.TaskSpec{{
						Name: "main", JobCount: int32(jobs), JobResources: res,
						Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(cfg.JobDuration)},
					}},
				}
				_, err := c.Submit(ctx, spec)
				mu.Lock()
				if err != nil {
					st.Refused++
					if st.FirstError == "" {
						st.FirstError = err.Error()
					}
				} else {
					st.Submitted++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	st.Seconds = time.Since(start).Seconds()
	if st.Seconds > 0 {
		st.PerSecond = float64(st.Submitted) / st.Seconds
	}
	return st
}

// sampler records the running jobs every bucket, and the process's CPU over
// the window (with the CPU profile, when asked).
type sampler struct {
	r          *runner
	profile    io.Writer
	memProfile io.Writer
	// heapProfile receives the in-use heap after a forced collection, once
	// the window's figures are taken.
	heapProfile io.Writer
	trace       io.Writer

	running        []int64 // per bucket since t0; -1 where a tick was missed
	cpu0, cpu1     time.Duration
	mach0, mach1   time.Duration
	machOK         bool
	winFrom, winTo time.Time
	profiling      bool
	tracing        bool
	err            error
	maxRSSKiB      int64
	mem0, mem1     runtime.MemStats
	srv0, srv1     time.Duration
	srvOK          bool
	heapMiB        float64
	goroutines     int
	// updates reads the embedded scheduler's tree's update counters (nil
	// when the scheduler is not embedded); fs0 and fs1 are them at the
	// window's start and end.
	updates  func() (actors.UpdateStats, bool)
	fs0, fs1 actors.UpdateStats
	fsOK     bool
	// nodes reads the embedded scheduler's node sessions and transitions
	// (nil when it is not embedded); nodesEnd is them at the window's end.
	nodes    func() *NodeStats
	nodesEnd *NodeStats
}

func (s *sampler) run(ctx context.Context) {
	r := s.r
	t := time.NewTicker(bucket)
	defer t.Stop()
	defer s.stopWindow()
	wait := time.NewTimer(time.Until(r.t0))
	select {
	case <-ctx.Done():
		wait.Stop()
		return
	case <-wait.C:
	}
	for {
		now := time.Now()
		if !now.Before(r.winStart) && s.winFrom.IsZero() {
			s.startWindow(now)
		}
		if !now.Before(r.end) {
			return
		}
		if i := int(now.Sub(r.t0) / bucket); i >= len(s.running) {
			for len(s.running) < i {
				s.running = append(s.running, -1) // missed tick
			}
			s.running = append(s.running, r.running.Load())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *sampler) startWindow(now time.Time) {
	s.winFrom, s.cpu0 = now, cpuTime()
	if s.updates != nil {
		s.fs0, s.fsOK = s.updates()
	}
	s.mach0, s.machOK = machineBusy()
	runtime.ReadMemStats(&s.mem0)
	if pid := s.r.cfg.ServerPID; pid > 0 {
		s.srv0, s.srvOK = processCPU(pid)
	}
	if s.profile != nil {
		if err := pprof.StartCPUProfile(s.profile); err != nil {
			s.err = fmt.Errorf("cpu profile: %w", err)
		} else {
			s.profiling = true
		}
	}
	if s.trace != nil {
		if err := trace.Start(s.trace); err != nil {
			s.err = fmt.Errorf("trace: %w", err)
		} else {
			s.tracing = true
		}
	}
}

func (s *sampler) stopWindow() {
	if s.winFrom.IsZero() {
		return
	}
	s.winTo, s.cpu1 = time.Now(), cpuTime()
	var ok bool
	if s.updates != nil && s.fsOK {
		s.fs1, s.fsOK = s.updates()
	}
	if s.nodes != nil {
		s.nodesEnd = s.nodes()
	}
	s.mach1, ok = machineBusy()
	s.machOK = s.machOK && ok
	if pid := s.r.cfg.ServerPID; pid > 0 {
		s.srv1, ok = processCPU(pid)
		s.srvOK = s.srvOK && ok
	}
	if s.profiling {
		pprof.StopCPUProfile()
	}
	if s.tracing {
		trace.Stop()
	}
	if s.memProfile != nil {
		if err := pprof.Lookup("allocs").WriteTo(s.memProfile, 0); err != nil && s.err == nil {
			s.err = fmt.Errorf("memory profile: %w", err)
		}
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.maxRSSKiB = int64(ru.Maxrss)
	}
	runtime.ReadMemStats(&s.mem1)
	s.heapMiB = float64(s.mem1.HeapInuse) / (1 << 20)
	s.goroutines = runtime.NumGoroutine()
	if s.heapProfile != nil {
		if err := writeHeapProfile(s.heapProfile); err != nil && s.err == nil {
			s.err = fmt.Errorf("heap profile: %w", err)
		}
	}
}

// writeHeapProfile collects the garbage, then writes the in-use heap
// profile: exactly what is live now, not what was at the last collection.
func writeHeapProfile(w io.Writer) error {
	runtime.GC()
	return pprof.Lookup("heap").WriteTo(w, 0)
}

// cpuTime is this process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fill completes the report from the counters and samples.
func (r *runner) fill(rep *Report, smp *sampler, shards []*shard, stopped time.Time) {
	cfg := &r.cfg
	winEnd := r.end
	if stopped.Before(winEnd) {
		winEnd = stopped
	}
	win := winEnd.Sub(r.winStart).Seconds()
	h := &rep.Heartbeats
	h.TargetPerSecond = float64(cfg.Agents) / cfg.HeartbeatPeriod.Seconds()
	h.Sent, h.Answered, h.Failed = r.sentWin.Load(), r.answeredWin.Load(), r.failedWin.Load()
	h.TimedOut, h.Skipped, h.Late, h.StaleResponses = r.timeoutsWin.Load(), r.skippedWin.Load(), r.late.Load(), r.stale.Load()
	if win > 0 {
		h.PerSecond = float64(h.Answered) / win
	}

	var rtts, first, second, lags []time.Duration
	half := time.Duration(win * float64(time.Second) / 2)
	for _, sh := range shards {
		sh.mu.Lock()
		for _, x := range sh.rtts {
			rtts = append(rtts, x.rtt)
			if x.at < half {
				first = append(first, x.rtt)
			} else {
				second = append(second, x.rtt)
			}
		}
		sh.mu.Unlock()
		lags = append(lags, sh.lags...)
	}
	rep.RTT, rep.RTTFirstHalf, rep.RTTSecondHalf, rep.SendLag = latency(rtts), latency(first), latency(second), latency(lags)

	j := &rep.Jobs
	j.StartedTotal, j.StartedWindow = r.startsAll.Load(), r.startsWin.Load()
	if win > 0 {
		j.StartsPerSecond = float64(j.StartedWindow) / win
	}
	j.FinishedReported = r.finished.Load()
	j.Duplicates, j.Aborted, j.Interrupted, j.Signals = r.duplicates.Load(), r.aborted.Load(), r.interrupted.Load(), r.signals.Load()
	per := int(time.Second / bucket)
	var sum uint64
	for i := range r.starts {
		sum += r.starts[i].Load()
		if i >= per {
			sum -= r.starts[i-per].Load()
		}
		j.PeakStartsPerSecond = max(j.PeakStartsPerSecond, float64(sum))
	}
	slots := float64(rep.Slots)
	fillEnd := -1
	var utilSum float64
	var utilN int
	for i, n := range smp.running {
		if n < 0 {
			continue
		}
		if fillEnd < 0 && float64(n) >= fillFraction*slots {
			fillEnd = i
		}
		at := r.t0.Add(time.Duration(i) * bucket)
		if r.inWindow(at) && at.Before(winEnd) {
			utilSum += float64(n) / slots
			utilN++
		}
	}
	if utilN > 0 {
		j.Utilization = utilSum / float64(utilN)
	}
	j.Fill.Reached = fillEnd >= 0
	if !j.Fill.Reached {
		fillEnd = len(smp.running) - 1
	}
	for i := 0; i <= fillEnd && i < len(r.starts); i++ {
		j.Fill.Starts += r.starts[i].Load()
	}
	j.Fill.Seconds = (time.Duration(fillEnd+1) * bucket).Seconds()
	if j.Fill.Seconds > 0 {
		j.Fill.StartsPerSecond = float64(j.Fill.Starts) / j.Fill.Seconds
	}

	p := &rep.Process
	p.GOMAXPROCS = runtime.GOMAXPROCS(0)
	if !smp.winFrom.IsZero() {
		p.CPUSeconds = (smp.cpu1 - smp.cpu0).Seconds()
		if d := smp.winTo.Sub(smp.winFrom).Seconds(); d > 0 {
			p.CPUCores = p.CPUSeconds / d
			p.OtherCPUCores = -1
			if cfg.ServerPID > 0 {
				p.ServerCPUCores = -1
				if smp.srvOK {
					p.ServerCPUCores = (smp.srv1 - smp.srv0).Seconds() / d
				}
			}
			p.AllocMiBPerSecond = float64(smp.mem1.TotalAlloc-smp.mem0.TotalAlloc) / (1 << 20) / d
			if smp.machOK {
				p.OtherCPUCores = max(0, (smp.mach1-smp.mach0).Seconds()/d-p.CPUCores-max(0, p.ServerCPUCores))
			}
		}
	}
	p.MaxRSSMiB = float64(smp.maxRSSKiB) / 1024
	p.GCs = smp.mem1.NumGC - smp.mem0.NumGC
	// The runtime keeps the last len(PauseNs) pauses: the window's, or its
	// last ones when it had more GCs.
	pauses := uint32(len(smp.mem1.PauseNs))
	from := smp.mem0.NumGC
	if smp.mem1.NumGC-from > pauses {
		from = smp.mem1.NumGC - pauses
	}
	for i := from; i < smp.mem1.NumGC; i++ {
		pause := float64(smp.mem1.PauseNs[i%pauses]) / 1e6
		p.GCPauseMs += pause
		p.GCPauseMaxMs = max(p.GCPauseMaxMs, pause)
	}
	p.HeapMiB, p.Goroutines = smp.heapMiB, smp.goroutines
	if smp.fsOK && !smp.winFrom.IsZero() {
		a, b := smp.fs0, smp.fs1
		f := &FairShareStats{Updates: b.Updates - a.Updates, Failures: b.Failures - a.Failures, LastMs: float64(b.Last) / 1e6,
			RecycledResults: b.RecycledResults - a.RecycledResults, AllocatedResults: b.AllocatedResults - a.AllocatedResults}
		if f.Updates > 0 {
			f.MeanMs = (b.Seconds - a.Seconds) * 1000 / float64(f.Updates)
			f.SnapshotLockMs = (b.SnapshotLockSeconds - a.SnapshotLockSeconds) * 1000 / float64(f.Updates)
			f.PublishLockMs = (b.PublishLockSeconds - a.PublishLockSeconds) * 1000 / float64(f.Updates)
			ops := b.Operations - a.Operations
			f.OperationsPerUpdate = float64(ops) / float64(f.Updates)
			if ops > 0 {
				f.RecomputedPercent = 100 * float64(b.RecomputedOperations-a.RecomputedOperations) / float64(ops)
			}
		}
		rep.FairShare = f
	}
	rep.Nodes = smp.nodesEnd

	r.errMu.Lock()
	rep.Errors = topErrors(r.errs)
	r.errMu.Unlock()
	rep.Checks = checks(cfg, rep)
}
