package nodeagent

import (
	"time"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// startSimulatedLocked completes j after d. A simulated job is a timer: it
// costs no goroutine while it "runs".
func (a *Agent) startSimulatedLocked(j *job, d time.Duration) {
	j.simTimer = time.AfterFunc(max(d, 0), func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.running[j.id] == j {
			a.finishLocked(j, pb.JobState_JOB_STATE_COMPLETED, 0, "", false)
		}
	})
}
