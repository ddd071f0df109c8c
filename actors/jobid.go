package actors

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/scheduler/placement"
)

// ErrJobID is wrapped by every malformed job id error.
var ErrJobID = errors.New("actors: malformed job id")

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

// parseJobID parses a job id made by jobRef.String.
func parseJobID(s string) (jobRef, error) {
	parts := strings.Split(s, ".")
	if len(parts) != 4 || parts[0] == "" {
		return jobRef{}, fmt.Errorf("%w: %q is not <operation>.<task>.<index>.<attempt>", ErrJobID, s)
	}
	var n [3]int
	for i, p := range parts[1:] {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return jobRef{}, fmt.Errorf("%w: %q: %q is not a number >= 0", ErrJobID, s, p)
		}
		n[i] = v
	}
	return jobRef{key: placement.JobKey{Operation: scheduler.OperationID(parts[0]), Task: n[0], Index: n[1]}, attempt: n[2]}, nil
}
