package scheduler

import (
	"testing"

	"github.com/sharetree/sharetree/internal/purity"
)

// The engine is pure: it imports nothing from NATS or protoactor (directly or
// through dependencies), reads no clock, logs nothing, starts no goroutines
// and does no I/O.
func TestSchedulerDependenciesArePure(t *testing.T) { purity.CheckDependencies(t) }

func TestSchedulerSourceIsPure(t *testing.T) {
	purity.CheckSource(t, purity.Rules{
		Imports: purity.BaseImports,
		Calls: purity.With(purity.PrintCalls, purity.TargetMathCalls, map[string]string{
			"time.Now": "reading the clock", "time.Since": "reading the clock", "time.Until": "reading the clock",
			"time.Sleep": "sleeping", "time.After": "timers", "time.NewTimer": "timers", "time.NewTicker": "timers",
		}),
		MinFiles: 10,
	})
}
