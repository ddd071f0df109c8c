package dashboard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// ErrBadSample is wrapped by Restore's errors: an archived sample that
// does not describe a tree's pools.
var ErrBadSample = errors.New("dashboard: bad archived sample")

// Archive keeps the samples across leaders: the leader's Dashboard
// appends every sample it records, and a new leader's loads them before
// it samples, so that its charts go back as far as its predecessor's
// (the server's archive is a JetStream stream, subjects.DashboardStream).
type Archive interface {
	// Append stores a sample. It must not block the sampler for long; a
	// sample it cannot store is lost to the next leader only.
	Append(s *pb.DashboardSample)
	// Load calls fn with the stored samples, oldest first, until they or
	// ctx end.
	Load(ctx context.Context, fn func(*pb.DashboardSample)) error
}

// SetArchive makes the Dashboard restore its history from a (in Run,
// before it samples) and append each sample it records to it. Call it
// before Run.
func (d *Dashboard) SetArchive(a Archive) { d.archive = a }

// restore loads the archive into the history; a sample that does not
// decode is skipped and logged.
func (d *Dashboard) restore(ctx context.Context) {
	restored, bad := 0, 0
	err := d.archive.Load(ctx, func(s *pb.DashboardSample) {
		ok, err := d.history.Restore(s)
		switch {
		case err != nil:
			bad++
			if bad == 1 {
				d.logger.Warn("archived dashboard sample skipped", "err", err)
			}
		case ok:
			restored++
		}
	})
	if err != nil {
		d.logger.Warn("dashboard history not restored in full", "restored", restored, "err", err)
		return
	}
	d.logger.Info("dashboard history restored", "samples", restored, "skipped_bad", bad)
}

// Latest is tree's last sample as the archive keeps it (nil when the tree
// has none).
func (h *History) Latest(tree string) *pb.DashboardSample {
	h.mu.Lock()
	defer h.mu.Unlock()
	th := h.trees[tree]
	if th == nil || len(th.samples) == 0 {
		return nil
	}
	s := &th.samples[len(th.samples)-1]
	out := &pb.DashboardSample{Tree: tree, Time: timestamppb.New(s.at), Pools: make([]*pb.DashboardPoint, 0, len(s.points))}
	vec := func(v vec32) *pb.Resources {
		var r scheduler.Resources
		for k, x := range v {
			r[k] = float64(x)
		}
		return wire.ToResources(r)
	}
	for _, p := range s.points {
		dp := &pb.DashboardPoint{Name: th.names[p.slot], Usage: vec(p.usage), Demand: vec(p.demand), FairShare: vec(p.fairShare),
			Integral: p.integral, Starvation: int32(p.starvation)}
		if p.integral {
			dp.Volume = vec(p.volume)
		}
		out.Pools = append(out.Pools, dp)
	}
	return out
}

// Restore adds an archived sample to its tree's history, as Record would
// have, and reports whether it did: a sample no newer than the tree's
// last by Resolution is skipped (restored samples come oldest first, and
// the archive may hold one the history has). A sample that does not
// describe pools (no tree, no time, a pool without a name or twice, an
// amount that is not a finite number >= 0, a starvation status out of
// range) is refused with ErrBadSample naming what is wrong, and changes
// nothing.
func (h *History) Restore(s *pb.DashboardSample) (bool, error) {
	bad := func(format string, args ...any) (bool, error) {
		return false, fmt.Errorf("%w: tree %q: %s", ErrBadSample, s.GetTree(), fmt.Sprintf(format, args...))
	}
	if s.GetTree() == "" {
		return bad("no tree")
	}
	if !s.GetTime().IsValid() {
		return bad("no valid time")
	}
	at := s.GetTime().AsTime()
	type named struct {
		name string
		p    point
	}
	pools := make([]named, 0, len(s.GetPools()))
	seen := map[string]bool{}
	for i, dp := range s.GetPools() {
		switch {
		case dp.GetName() == "":
			return bad("pools[%d] has no name", i)
		case seen[dp.GetName()]:
			return bad("pools[%d]: pool %q twice", i, dp.GetName())
		case dp.GetStarvation() < 0 || dp.GetStarvation() > int32(scheduler.AggressivelyStarving):
			return bad("pools[%d] (%s): starvation %d is not 0, 1 or 2", i, dp.GetName(), dp.GetStarvation())
		}
		seen[dp.GetName()] = true
		p := point{integral: dp.GetIntegral(), starvation: uint8(dp.GetStarvation())}
		for _, v := range []struct {
			field string
			in    *pb.Resources
			out   *vec32
		}{{"usage", dp.GetUsage(), &p.usage}, {"demand", dp.GetDemand(), &p.demand}, {"fair_share", dp.GetFairShare(), &p.fairShare}, {"volume", dp.GetVolume(), &p.volume}} {
			r, err := wire.Resources(fmt.Sprintf("pools[%d].%s", i, v.field), v.in)
			if err != nil {
				return bad("%v", err)
			}
			*v.out = toVec32(&r)
		}
		pools = append(pools, named{dp.GetName(), p})
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	th := h.tree(s.GetTree())
	if n := len(th.samples); n > 0 && at.Sub(th.samples[n-1].at) < h.cfg.Resolution {
		return false, nil
	}
	points := make([]point, len(pools))
	for i, n := range pools {
		n.p.slot = th.slot(n.name)
		points[i] = n.p
	}
	slices.SortFunc(points, func(a, b point) int { return cmp.Compare(a.slot, b.slot) })
	h.add(th, sample{at: at, points: points})
	return true, nil
}
