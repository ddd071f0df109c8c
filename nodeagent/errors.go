package nodeagent

import "errors"

// ErrInvalidConfig is wrapped by every Config.Validate error; the message
// names the field.
var ErrInvalidConfig = errors.New("nodeagent: invalid config")

// ErrAlreadyRunning is returned by Run when the agent has already been run.
var ErrAlreadyRunning = errors.New("nodeagent: agent already running or stopped")

// ErrSubscribe is wrapped when Run cannot subscribe to its subjects.
var ErrSubscribe = errors.New("nodeagent: subscribe")

// ErrBadJobSpec is wrapped in the error of a job that fails because its spec
// cannot be run (no id, no command and no simulated duration, bad resources).
var ErrBadJobSpec = errors.New("nodeagent: bad job spec")
