package orchid

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/scheduler"
)

// Collector exports the orchid's main numbers as Prometheus gauges, read
// from a fresh snapshot of every tree at each scrape.
type Collector struct {
	o *Orchid

	up, updateTime, reviving                *prometheus.Desc
	fairShare, usageShare, demandShare      *prometheus.Desc
	operations, running, lightweight, limit *prometheus.Desc
	starvation                              *prometheus.Desc
	updates, updateFailures, lastUpdate     *prometheus.Desc
	results, stateWrites                    *prometheus.Desc
	updateOperations                        *prometheus.Desc
	journalBatches, journalCompletions      *prometheus.Desc
	journalFailedJobs                       *prometheus.Desc
	journalFailures, journalTrims           *prometheus.Desc
	journalQueued, journalNeeding           *prometheus.Desc
}

// journalSource is a Source that has a completions journal.
type journalSource interface {
	JournalStats() (actors.JournalStats, bool)
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns the orchid's collector.
func NewCollector(o *Orchid) *Collector {
	pool := []string{"tree", "pool"}
	share := []string{"tree", "pool", "resource"}
	return &Collector{
		o:          o,
		up:         prometheus.NewDesc("sharetree_tree_up", "1 when the tree answered the scrape's snapshot request in time, else 0.", []string{"tree"}, nil),
		updateTime: prometheus.NewDesc("sharetree_tree_last_update_timestamp_seconds", "Time of the tree's latest fair-share update.", []string{"tree"}, nil),
		reviving: prometheus.NewDesc("sharetree_tree_reviving",
			"1 while the tree's latest fair-share update was computed before a new leader's nodes reported their jobs: its pools' shares and starvation are left out of the scrape (a gap, not a false dip), 0 otherwise.", []string{"tree"}, nil),
		fairShare:   prometheus.NewDesc("sharetree_pool_fair_share", "A pool's fair share (fair_share.total) of one resource, as a fraction of the cluster.", share, nil),
		usageShare:  prometheus.NewDesc("sharetree_pool_usage_share", "A pool's usage share of one resource.", share, nil),
		demandShare: prometheus.NewDesc("sharetree_pool_demand_share", "A pool's demand share of one resource.", share, nil),
		operations:  prometheus.NewDesc("sharetree_pool_operation_count", "Running and pending operations in a pool's subtree (operation_count).", pool, nil),
		running:     prometheus.NewDesc("sharetree_pool_running_operation_count", "Running operations in a pool's subtree, lightweight ones excluded (running_operation_count).", pool, nil),
		lightweight: prometheus.NewDesc("sharetree_pool_lightweight_running_operation_count", "Running lightweight operations in a pool's subtree.", pool, nil),
		limit:       prometheus.NewDesc("sharetree_pool_max_running_operation_count", "A pool's effective max_running_operation_count.", pool, nil),
		starvation:  prometheus.NewDesc("sharetree_pool_starvation_status", "0 non_starving, 1 starving, 2 aggressively_starving.", pool, nil),
		updates: prometheus.NewDesc("sharetree_tree_fair_share_update_seconds",
			"The fair-share engine's time over the tree's completed updates since its actor started.", []string{"tree"}, nil),
		updateFailures: prometheus.NewDesc("sharetree_tree_fair_share_update_failures_total",
			"Fair-share updates that failed since the tree's actor started.", []string{"tree"}, nil),
		lastUpdate: prometheus.NewDesc("sharetree_tree_fair_share_last_update_seconds",
			"The fair-share engine's time in the tree's latest completed update.", []string{"tree"}, nil),
		results: prometheus.NewDesc("sharetree_tree_fair_share_results_total",
			"Results the tree's updates wrote into: recycled (memory of a Result no reader holds) or allocated.", []string{"tree", "source"}, nil),
		updateOperations: prometheus.NewDesc("sharetree_tree_fair_share_update_operations_total",
			"Operations the tree's completed updates read, by whether the engine computed them afresh (recomputed: inputs changed, new, or the tree's structure changed) or carried them over from the update before (kept).", []string{"tree", "outcome"}, nil),
		stateWrites: prometheus.NewDesc("sharetree_tree_state_writes_total",
			"Writes of the tree's state (integral pools' accumulated volumes) to the scheduler bucket, by outcome (ok, failed).", []string{"tree", "outcome"}, nil),
		journalBatches: prometheus.NewDesc("sharetree_journal_batches_total",
			"Batches written to the completions journal (each one fsynced write).", nil, nil),
		journalCompletions: prometheus.NewDesc("sharetree_journal_completions_total",
			"Completed jobs written to the completions journal before their finish was acknowledged.", nil, nil),
		journalFailedJobs: prometheus.NewDesc("sharetree_journal_failed_jobs_total",
			"Failed jobs written to the completions journal before their finish was acknowledged (each counts towards its operation's max_failed_job_count).", nil, nil),
		journalFailures: prometheus.NewDesc("sharetree_journal_write_failures_total",
			"Completions journal writes that failed (their jobs wait, unacknowledged, and are written again).", nil, nil),
		journalTrims: prometheus.NewDesc("sharetree_journal_trims_total",
			"Trims of completions journal batches that no operation needs any more.", nil, nil),
		journalQueued: prometheus.NewDesc("sharetree_journal_queued",
			"Completed and failed jobs (and operations' write reports) waiting to be written to the journal.", nil, nil),
		journalNeeding: prometheus.NewDesc("sharetree_journal_operations_needing",
			"Operations with completed or failed jobs that only the journal holds (not yet in a stored status).", nil, nil),
	}
}

// Describe sends every descriptor.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.up, c.updateTime, c.reviving, c.fairShare, c.usageShare, c.demandShare,
		c.operations, c.running, c.lightweight, c.limit, c.starvation, c.updates, c.updateFailures, c.lastUpdate, c.results, c.updateOperations, c.stateWrites,
		c.journalBatches, c.journalCompletions, c.journalFailedJobs, c.journalFailures, c.journalTrims, c.journalQueued, c.journalNeeding} {
		ch <- d
	}
}

// Collect snapshots every tree; a tree that does not answer is reported
// with sharetree_tree_up 0 and nothing else.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if js, ok := c.o.src.(journalSource); ok {
		if st, ok := js.JournalStats(); ok {
			counter := func(d *prometheus.Desc, v uint64) {
				ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
			}
			counter(c.journalBatches, st.Batches)
			counter(c.journalCompletions, st.Completions)
			counter(c.journalFailedJobs, st.FailedJobs)
			counter(c.journalFailures, st.WriteFailures)
			counter(c.journalTrims, st.Trims)
			gauge(c.journalQueued, float64(st.Queued))
			gauge(c.journalNeeding, float64(st.Needing))
		}
	}
	for _, tree := range c.o.src.Trees() {
		in, err := c.o.src.Introspect(tree, actors.Scope{})
		if err != nil {
			c.o.logger.Warn("metrics: tree snapshot failed", "tree", tree, "err", err)
			gauge(c.up, 0, tree)
			continue
		}
		gauge(c.up, 1, tree)
		u := in.Updates
		ch <- prometheus.MustNewConstSummary(c.updates, u.Updates, u.Seconds, nil, tree)
		counter := func(d *prometheus.Desc, v uint64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
		}
		counter(c.updateFailures, u.Failures, tree)
		counter(c.results, u.RecycledResults, tree, "recycled")
		counter(c.results, u.AllocatedResults, tree, "allocated")
		counter(c.updateOperations, u.RecomputedOperations, tree, "recomputed")
		counter(c.updateOperations, u.Operations-u.RecomputedOperations, tree, "kept")
		counter(c.stateWrites, u.StateWrites, tree, "ok")
		counter(c.stateWrites, u.StateWriteFailures, tree, "failed")
		gauge(c.lastUpdate, u.Last.Seconds(), tree)
		c.collectTree(gauge, tree, in)
		in.Release()
	}
}

// collectTree reports one tree's snapshot.
func (c *Collector) collectTree(gauge func(*prometheus.Desc, float64, ...string), tree string, in *actors.TreeIntrospection) {
	if in.Result != nil {
		gauge(c.updateTime, float64(in.Result.Now.UnixNano())/1e9, tree)
	}
	reviving := 0.0
	if in.Reviving {
		reviving = 1
	}
	gauge(c.reviving, reviving, tree)
	for _, p := range in.Pools {
		gauge(c.operations, float64(p.Counts.Operations), tree, p.Name)
		gauge(c.running, float64(p.Counts.Running), tree, p.Name)
		gauge(c.lightweight, float64(p.Counts.LightweightRunning), tree, p.Name)
		gauge(c.limit, float64(p.Counts.MaxRunning), tree, p.Name)
		if in.Result == nil || in.Reviving {
			continue
		}
		e, ok := in.Result.Element(p.Name)
		if !ok || e.Kind == scheduler.KindOperation {
			continue
		}
		gauge(c.starvation, float64(e.StarvationStatus), tree, p.Name)
		for r := range scheduler.NumResources {
			res := scheduler.ResourceType(r).String()
			gauge(c.fairShare, e.FairShare.Total[r], tree, p.Name, res)
			gauge(c.usageShare, e.UsageShare[r], tree, p.Name, res)
			gauge(c.demandShare, e.DemandShare[r], tree, p.Name, res)
		}
	}
}
