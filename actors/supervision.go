package actors

import (
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
)

// ErrActorPanic is wrapped by the error System.Fatal delivers when an
// actor panics.
var ErrActorPanic = errors.New("actors: actor panic")

// fatalSupervision supervises every actor of the system: a panic stops the
// actor and is fatal to the system (System.Fatal), never a restart. A
// restarted actor comes back from its producer with its state wiped — an
// operation pending again and acknowledged to nobody, a node's jobs
// forgotten — and its next write would store that; the process stops
// instead and a new one revives from the store and the nodes' reports.
// The error names the actor and the message it was handling.
type fatalSupervision struct{ fail func(error) }

func (f *fatalSupervision) HandleFailure(as *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, message any) {
	f.fail(fmt.Errorf("%w: %s panicked handling %T: %v", ErrActorPanic, child.GetId(), actor.UnwrapEnvelopeMessage(message), reason))
	as.EventStream.Publish(&actor.SupervisorEvent{Child: child, Reason: reason, Directive: actor.StopDirective})
	sup.StopChildren(child)
}
