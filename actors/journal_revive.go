package actors

import (
	"log/slog"
	"slices"

	"google.golang.org/protobuf/proto"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// mergeJournal adds the completions found in the journal at start to the
// revived unfinished operations' stored completed jobs. It returns the
// statuses to revive (those it added to are copies) and the operations it
// added to: their completions are only in the journal until they store a
// status, which they do soon after they start (see journalWriter). A job
// id that does not parse, or names a job outside its operation's tasks, is
// skipped with a warning. An operation whose stored completed jobs are not
// trusted (storedProgress) keeps its status: all its jobs run again.
func mergeJournal(revived []*pb.OperationStatus, found []JournalBatch, logger *slog.Logger) ([]*pb.OperationStatus, map[string]bool) {
	byOp := map[string][]jobRef{}
	bad := 0
	for _, b := range found {
		for _, id := range b.JobIDs {
			ref, ok := parseJobRef(id)
			if !ok {
				bad++
				continue
			}
			op := string(ref.key.Operation)
			byOp[op] = append(byOp[op], ref)
		}
	}
	if bad > 0 {
		logger.Warn("completions journal: job ids that are not sharetree's skipped", "count", bad)
	}
	owed := map[string]bool{}
	out := slices.Clone(revived)
	for i, st := range out {
		refs := byOp[st.GetId()]
		if len(refs) == 0 || terminalState(st.GetState()) {
			continue
		}
		progress, err := storedProgress(st.GetSpec(), st)
		if err != nil {
			continue // submit logs it
		}
		added, outside := 0, 0
		for _, ref := range refs {
			ts := st.GetSpec().GetTasks()
			if t, x := ref.key.Task, ref.key.Index; t >= len(ts) || x >= int(ts[t].GetJobCount()) {
				outside++
				continue
			}
			if progress.mark(st.GetSpec(), ref.key.Task, ref.key.Index) {
				added++
			}
		}
		if outside > 0 {
			logger.Warn("completions journal: jobs outside their operation's tasks skipped", "operation", st.GetId(), "count", outside)
		}
		if added == 0 {
			continue
		}
		c := proto.Clone(st).(*pb.OperationStatus)
		c.CompletedJobs = progress.ranges()
		if j := c.GetJobs(); j != nil {
			j.Completed = progress.count
		}
		out[i] = c
		owed[st.GetId()] = true
		logger.Info("completions journal: completed jobs added to a revived operation", "operation", st.GetId(), "jobs", added)
	}
	return out, owed
}
