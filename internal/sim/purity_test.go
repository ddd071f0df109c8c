package sim

import (
	"testing"

	"github.com/sharetree/sharetree/internal/purity"
)

// The simulator is deterministic: nothing from NATS or protoactor among
// its dependencies, and no clock, logging, goroutines, randomness or I/O
// beyond the writers it is given in its source.
func TestSimDependenciesArePure(t *testing.T) { purity.CheckDependencies(t) }

func TestSimSourceIsPure(t *testing.T) {
	purity.CheckSource(t, purity.Rules{
		Imports: purity.With(purity.BaseImports, map[string]string{"sync": "concurrency"}),
		Calls: purity.With(purity.PrintCalls, map[string]string{
			"time.Now": "the clock", "time.Since": "the clock", "time.Until": "the clock", "time.Sleep": "the clock",
			"time.After": "the clock", "time.Tick": "the clock", "time.NewTimer": "the clock", "time.NewTicker": "the clock",
		}),
		MinFiles: 5,
	})
}
