package placement

import (
	"testing"

	"github.com/sharetree/sharetree/internal/purity"
)

// The package is pure: nothing from NATS or protoactor among its
// dependencies, and no clock, logging, goroutines, randomness or I/O in its
// source.
func TestPlacementDependenciesArePure(t *testing.T) { purity.CheckDependencies(t) }

func TestPlacementSourceIsPure(t *testing.T) {
	purity.CheckSource(t, purity.Rules{
		Imports:  purity.With(purity.BaseImports, map[string]string{"sync": "concurrency", "time": "the clock"}),
		Calls:    purity.With(purity.PrintCalls, purity.TargetMathCalls),
		MinFiles: 8,
	})
}
