package testutil

import (
	"testing"

	"go.uber.org/goleak"
)

// VerifyNoLeaks runs a package's tests (call it from TestMain) and fails
// them if a goroutine outlives them: whatever a test starts (a System, an
// agent, a NATS server, a client) must stop every goroutine it started.
// Two kinds are not a test's and are ignored: the actors dispatcher's pool
// workers, shared by the actor systems of a process, which exit after
// idling, and protoactor's dead-letter throttle timer, which exits after
// its period.
func VerifyNoLeaks(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/sharetree/sharetree/actors.(*workerPool).worker"),
		goleak.IgnoreAnyFunction("github.com/asynkron/protoactor-go/actor.NewDeadLetter.NewThrottle.func4.1"))
}
