package dashboard

import (
	"context"
	"log/slog"
	"time"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/internal/orchid"
)

// Source is the running scheduler (*actors.System).
type Source interface {
	// Trees names the live trees in configuration order.
	Trees() []string
	// Introspect snapshots one tree; it waits, bounded, for the tree
	// actor.
	Introspect(tree string, scope actors.Scope) (*actors.TreeIntrospection, error)
}

var _ Source = (*actors.System)(nil)

// Dashboard serves the pages (Handler) and samples the trees into its
// History (Run).
type Dashboard struct {
	cfg Config
	src Source
	// orchid lists the trees with their counts (the tree list page).
	orchid  *orchid.Orchid
	history *History
	logger  *slog.Logger
	pages   *pages
	// archive, when set, keeps the samples across leaders (SetArchive).
	archive Archive
}

// New returns a Dashboard reading src, and o for the list of trees;
// logger may be nil.
func New(src Source, o *orchid.Orchid, cfg Config, logger *slog.Logger) (*Dashboard, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	return &Dashboard{cfg: cfg, src: src, orchid: o, history: NewHistory(cfg), logger: logger.With("component", "dashboard"), pages: p}, nil
}

// Sample records every live tree's latest fair-share update (see
// History.Record) and forgets the trees that are gone. A tree that does
// not answer is skipped until the next sample, and so is a tree whose
// restarted scheduler still waits for the nodes to report their jobs
// (TreeIntrospection.Reviving): its usage would chart a dip that did not
// happen, so its charts show a gap instead.
func (d *Dashboard) Sample() {
	trees := d.src.Trees()
	d.history.Retain(trees)
	for _, tree := range trees {
		in, err := d.src.Introspect(tree, actors.Scope{})
		if err != nil {
			d.logger.Debug("tree not sampled", "tree", tree, "err", err)
			continue
		}
		if in.Reviving {
			in.Release()
			d.logger.Debug("tree not sampled: its jobs are being revived", "tree", tree)
			continue
		}
		recorded := d.history.Record(tree, in.Result)
		in.Release()
		if recorded && d.archive != nil {
			d.archive.Append(d.history.Latest(tree))
		}
	}
}

// Run samples every Resolution until ctx ends, after restoring the
// history from the archive, if there is one.
func (d *Dashboard) Run(ctx context.Context) {
	if d.archive != nil {
		d.restore(ctx)
	}
	t := time.NewTicker(d.cfg.Resolution)
	defer t.Stop()
	d.Sample()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.Sample()
		}
	}
}
