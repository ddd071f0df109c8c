package placement

import "github.com/sharetree/sharetree/scheduler"

// task tracks which jobs of one TaskSpec are pending. Pending jobs are the
// requeued ones (retry, in requeue order) and the fresh range [next, count)
// minus skip (fresh jobs adopted out of order).
type task struct {
	// spec are the job resources as specified; res the fixed-point ones.
	spec scheduler.Resources
	res  vec
	// count is JobCount.
	count int
	// next is the lowest index never taken from the fresh range.
	next int
	// skip holds indices >= next that are no longer pending.
	skip map[int]struct{}
	// retry holds requeued indices, oldest requeue first.
	retry []int
	// pending counts the pending jobs.
	pending int
}

// take removes and returns the next pending job: the oldest retry, else the
// lowest fresh index. The caller checks pending > 0.
func (t *task) take() int {
	t.pending--
	if len(t.retry) > 0 {
		idx := t.retry[0]
		t.retry = t.retry[1:]
		if len(t.retry) == 0 {
			t.retry = nil
		}
		return idx
	}
	for {
		if _, skipped := t.skip[t.next]; !skipped {
			break
		}
		delete(t.skip, t.next)
		t.next++
	}
	idx := t.next
	t.next++
	return idx
}

// takeIndex removes job idx from the pending jobs; false when it is not
// pending. Retries are searched linearly (they are few).
func (t *task) takeIndex(idx int) bool {
	if idx < 0 || idx >= t.count {
		return false
	}
	for i, r := range t.retry {
		if r == idx {
			t.retry = append(t.retry[:i:i], t.retry[i+1:]...)
			t.pending--
			return true
		}
	}
	if idx < t.next {
		return false
	}
	if _, skipped := t.skip[idx]; skipped {
		return false
	}
	if idx == t.next {
		t.next++
	} else {
		if t.skip == nil {
			t.skip = make(map[int]struct{})
		}
		t.skip[idx] = struct{}{}
	}
	t.pending--
	return true
}

// requeue makes job idx pending again (after its run ended).
func (t *task) requeue(idx int) {
	t.retry = append(t.retry, idx)
	t.pending++
}
