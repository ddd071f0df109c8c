package actors

import (
	"fmt"

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
