package actors

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
)

// jobRef names one attempt of one job.
type jobRef struct {
	key     placement.JobKey
	attempt int
}

// String formats "<operation>.<task>.<index>.<attempt>"; operation ids never
// contain dots.
func (j jobRef) String() string {
	return fmt.Sprintf("%s.%d.%d.%d", j.key.Operation, j.key.Task, j.key.Index, j.attempt)
}

// parseJobRef reads a job id formatted by jobRef.String; false when id is
// not one (a job some other scheduler started, or garbage).
func parseJobRef(id string) (jobRef, bool) {
	var nums [3]int
	rest := id
	for i := 2; i >= 0; i-- {
		dot := strings.LastIndexByte(rest, '.')
		if dot < 0 {
			return jobRef{}, false
		}
		n, err := strconv.Atoi(rest[dot+1:])
		if err != nil || n < 0 || strconv.Itoa(n) != rest[dot+1:] {
			return jobRef{}, false
		}
		nums[i], rest = n, rest[:dot]
	}
	if rest == "" || strings.IndexByte(rest, '.') >= 0 {
		return jobRef{}, false
	}
	return jobRef{key: placement.JobKey{Operation: scheduler.OperationID(rest), Task: nums[0], Index: nums[1]}, attempt: nums[2]}, true
}
