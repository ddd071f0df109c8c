package actors

import (
	"fmt"
	"math/bits"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
)

// jobProgress is the set of an operation's jobs that completed for good,
// one bit per job. It is stored with the operation's status (as runs of
// indices) so that a restarted scheduler runs none of them again.
type jobProgress struct {
	tasks [][]uint64 // nil until a job of the task completes
	count int64
}

// mark records job index of task as completed; false when it already was
// or is out of range.
func (p *jobProgress) mark(spec *pb.OperationSpec, task, index int) bool {
	ts := spec.GetTasks()
	if task < 0 || task >= len(ts) || index < 0 || index >= int(ts[task].GetJobCount()) {
		return false
	}
	if p.tasks == nil {
		p.tasks = make([][]uint64, len(ts))
	}
	if p.tasks[task] == nil {
		p.tasks[task] = make([]uint64, (int(ts[task].GetJobCount())+63)/64)
	}
	w, bit := &p.tasks[task][index/64], uint64(1)<<(index%64)
	if *w&bit != 0 {
		return false
	}
	*w |= bit
	p.count++
	return true
}

// has reports whether job index of task is marked completed.
func (p *jobProgress) has(task, index int) bool {
	if task < 0 || task >= len(p.tasks) || index < 0 || index/64 >= len(p.tasks[task]) {
		return false
	}
	return p.tasks[task][index/64]&(uint64(1)<<(index%64)) != 0
}

// each calls fn for every completed job, by task then index.
func (p *jobProgress) each(fn func(task, index int)) {
	for ti, words := range p.tasks {
		for wi, w := range words {
			for w != 0 {
				b := bits.TrailingZeros64(w)
				w &^= 1 << b
				fn(ti, wi*64+b)
			}
		}
	}
}

// ranges returns the completed jobs as runs, by task then index.
func (p *jobProgress) ranges() []*pb.JobRange {
	var out []*pb.JobRange
	var cur *pb.JobRange
	p.each(func(task, index int) {
		if cur != nil && int(cur.Task) == task && int(cur.First+cur.Count) == index {
			cur.Count++
			return
		}
		cur = &pb.JobRange{Task: int32(task), First: int32(index), Count: 1}
		out = append(out, cur)
	})
	return out
}

// keys lists the completed jobs of operation id, by task then index.
func (p *jobProgress) keys(id scheduler.OperationID) []placement.JobKey {
	out := make([]placement.JobKey, 0, p.count)
	p.each(func(task, index int) {
		out = append(out, placement.JobKey{Operation: id, Task: task, Index: index})
	})
	return out
}

// storedProgress reads the completed jobs of a stored status. A range
// outside the spec's tasks or overlapping another is an error that names
// it; the status is then not trusted for any of its jobs.
func storedProgress(spec *pb.OperationSpec, st *pb.OperationStatus) (jobProgress, error) {
	var p jobProgress
	for i, r := range st.GetCompletedJobs() {
		task, first, count := int(r.GetTask()), int(r.GetFirst()), int(r.GetCount())
		ts := spec.GetTasks()
		if task < 0 || task >= len(ts) {
			return jobProgress{}, fmt.Errorf("completed_jobs[%d]: task %d does not exist (%d tasks)", i, task, len(ts))
		}
		if n := int(ts[task].GetJobCount()); first < 0 || count < 1 || first > n-count {
			return jobProgress{}, fmt.Errorf("completed_jobs[%d]: jobs %d to %d of task %d are outside its %d jobs", i, first, first+count-1, task, n)
		}
		for idx := first; idx < first+count; idx++ {
			if !p.mark(spec, task, idx) {
				return jobProgress{}, fmt.Errorf("completed_jobs[%d]: job %d of task %d is listed twice", i, idx, task)
			}
		}
	}
	return p, nil
}
