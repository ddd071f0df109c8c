package actors

import (
	"strconv"
	"strings"

	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
)

// jobRef names one attempt of one job. A job's attempts are numbered from
// 0 by each scheduler (a restarted one starts again from 0), so the
// attempt's id also names the leader epoch of the scheduler that started
// it: ids are unique across restarts, and a failure counted before a
// restart (its id stored with the operation) is never mistaken for a new
// one, nor the other way round.
type jobRef struct {
	key     placement.JobKey
	attempt int
	// epoch is the leader epoch of the scheduler that started the attempt;
	// 0 for none (a scheduler without an epoch, or an id written before
	// epochs were part of ids).
	epoch uint64
}

// String formats "<operation>.<task>.<index>.<attempt>.<epoch>", without
// ".<epoch>" when the epoch is 0; operation ids never contain dots.
func (j jobRef) String() string {
	b := make([]byte, 0, len(j.key.Operation)+24)
	b = append(b, j.key.Operation...)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(j.key.Task), 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(j.key.Index), 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(j.attempt), 10)
	if j.epoch != 0 {
		b = append(b, '.')
		b = strconv.AppendUint(b, j.epoch, 10)
	}
	return string(b)
}

// parseJobRef reads a job id formatted by jobRef.String, with or without
// the epoch; false when id is not one (a job some other scheduler started,
// or garbage).
func parseJobRef(id string) (jobRef, bool) {
	// Four numbers with the epoch, three without: the operation id, which
	// has no dots, is what is left.
	var nums [4]uint64
	parts := strings.Split(id, ".")
	n := len(parts) - 1
	if n != 3 && n != 4 || parts[0] == "" {
		return jobRef{}, false
	}
	for i, s := range parts[1:] {
		v, err := strconv.ParseUint(s, 10, 63)
		if err != nil || strconv.FormatUint(v, 10) != s || i < 3 && v > maxJobNumber {
			return jobRef{}, false
		}
		nums[i] = v
	}
	return jobRef{key: placement.JobKey{Operation: scheduler.OperationID(parts[0]), Task: int(nums[0]), Index: int(nums[1])},
		attempt: int(nums[2]), epoch: nums[3]}, true
}

// maxJobNumber bounds a task, index or attempt number in a job id (they are
// int32 on the wire).
const maxJobNumber = 1<<31 - 1
