package actors

import (
	"log/slog"
	"slices"

	"google.golang.org/protobuf/proto"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// mergeJournal adds the completed and failed jobs found in the journal at
// start to the revived unfinished operations' statuses: the completions to
// their stored completed jobs, the failures whose ids the stored status
// does not name (failed_job_ids) to their failed-job counts and ids. It
// returns the statuses to revive (those it added to are copies) and the
// operations it added to: their jobs are only in the journal until they
// store a status, which they do soon after they start (see
// journalWriter). A job id that does not parse, or names a job outside its
// operation's tasks, is skipped with a warning. An operation whose stored
// completed jobs are not trusted (storedProgress) keeps its status: all
// its jobs run again (and its failures are not added either).
func mergeJournal(revived []*pb.OperationStatus, found []JournalBatch, logger *slog.Logger) ([]*pb.OperationStatus, map[string]bool) {
	type journaled struct {
		completed []jobRef
		failed    []string
	}
	byOp := map[string]*journaled{}
	bad := 0
	add := func(id string, failed bool) {
		ref, ok := parseJobRef(id)
		if !ok {
			bad++
			return
		}
		j := byOp[string(ref.key.Operation)]
		if j == nil {
			j = &journaled{}
			byOp[string(ref.key.Operation)] = j
		}
		if failed {
			j.failed = append(j.failed, id)
		} else {
			j.completed = append(j.completed, ref)
		}
	}
	for _, b := range found {
		for _, id := range b.JobIDs {
			add(id, false)
		}
		for _, id := range b.FailedJobIDs {
			add(id, true)
		}
	}
	if bad > 0 {
		logger.Warn("completions journal: job ids that are not sharetree's skipped", "count", bad)
	}
	owed := map[string]bool{}
	out := slices.Clone(revived)
	for i, st := range out {
		j := byOp[st.GetId()]
		if j == nil || terminalState(st.GetState()) {
			continue
		}
		progress, err := storedProgress(st.GetSpec(), st)
		if err != nil {
			continue // submit logs it
		}
		added, outside := 0, 0
		ts := st.GetSpec().GetTasks()
		for _, ref := range j.completed {
			if t, x := ref.key.Task, ref.key.Index; t >= len(ts) || x >= int(ts[t].GetJobCount()) {
				outside++
				continue
			}
			if progress.mark(st.GetSpec(), ref.key.Task, ref.key.Index) {
				added++
			}
		}
		// A failure the stored status names is counted already (as is
		// one an earlier batch named: a failure journaled twice).
		failedIDs := slices.Clone(st.GetFailedJobIds())
		failed := 0
		for _, id := range j.failed {
			var added bool
			if failedIDs, added = countFailure(failedIDs, id); added {
				failed++
			}
		}
		if outside > 0 {
			logger.Warn("completions journal: jobs outside their operation's tasks skipped", "operation", st.GetId(), "count", outside)
		}
		if added == 0 && failed == 0 {
			continue
		}
		c := proto.Clone(st).(*pb.OperationStatus)
		c.CompletedJobs = progress.ranges()
		c.FailedJobIds = failedIDs
		if c.Jobs == nil {
			c.Jobs = &pb.JobCounters{}
		}
		c.Jobs.Completed = progress.count
		c.Jobs.Failed += int64(failed)
		out[i] = c
		owed[st.GetId()] = true
		logger.Info("completions journal: jobs added to a revived operation", "operation", st.GetId(), "completed", added, "failed", failed)
	}
	return out, owed
}
