package loadgen

import "fmt"

// backlogTolerance is the share of the window's heartbeats that may be
// skipped or time out before the backlog check fails.
const backlogTolerance = 0.001

// minAnsweredShare is the least answered heartbeats per second, as a share
// of agents / period, for the backlog check.
const minAnsweredShare = 0.99

// checks compares the report with the targets:
//
//   - no growing backlog: at most 0.1 % of the window's heartbeats were
//     skipped (the previous one still in flight) or timed out, and the
//     answered heartbeats per second reach 99 % of agents / period;
//   - the round trip's p99 is at most Targets.P99;
//   - the window's job starts per second reach Targets.StartsPerSecond;
//   - with the scheduler embedded: no node was taken offline or declared
//     lost (every agent heartbeats throughout the run), and every agent
//     has a node session at the window's end.
func checks(cfg *Config, rep *Report) []Check {
	h := rep.Heartbeats
	due := h.Sent + h.Skipped
	bad := h.Skipped + h.TimedOut
	backlogOK := due > 0 && float64(bad) <= backlogTolerance*float64(due) && h.PerSecond >= minAnsweredShare*h.TargetPerSecond
	out := []Check{{
		Name:   "no growing backlog",
		Target: fmt.Sprintf("≤ %.1f%% skipped or timed out, ≥ %.0f heartbeats/s", 100*backlogTolerance, minAnsweredShare*h.TargetPerSecond),
		Value:  fmt.Sprintf("%d skipped, %d timed out of %d; %.0f/s", h.Skipped, h.TimedOut, due, h.PerSecond),
		OK:     backlogOK,
	}}
	if cfg.Targets.P99 > 0 {
		out = append(out, Check{
			Name: "heartbeat round trip p99", Target: fmt.Sprintf("≤ %s", ms(toMS(cfg.Targets.P99))),
			Value: ms(rep.RTT.P99), OK: rep.RTT.Count > 0 && rep.RTT.P99 <= toMS(cfg.Targets.P99),
		})
	}
	if cfg.Targets.StartsPerSecond > 0 {
		out = append(out, Check{
			Name: "job starts per second", Target: fmt.Sprintf("≥ %.0f", cfg.Targets.StartsPerSecond),
			Value: fmt.Sprintf("%.0f (initial fill %.0f)", rep.Jobs.StartsPerSecond, rep.Jobs.Fill.StartsPerSecond),
			OK:    rep.Jobs.StartsPerSecond >= cfg.Targets.StartsPerSecond,
		})
	}
	if n := rep.Nodes; n != nil {
		out = append(out, Check{
			Name: "no node falsely offline or lost", Target: fmt.Sprintf("0 offline, 0 lost, %d sessions", rep.Agents),
			Value: fmt.Sprintf("%d offline, %d lost, %d sessions", n.WentOffline, n.Lost, n.Sessions),
			OK:    n.WentOffline == 0 && n.Lost == 0 && n.Sessions == rep.Agents,
		})
	}
	return out
}
