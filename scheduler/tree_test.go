package scheduler

import (
	"errors"
	"strings"
	"testing"
)

// With several problems in the operation list, the tree reports the one that
// checking each operation in turn (validity, duplicate, id clashing with a
// pool, pool exists) meets first.
func TestBuildReportsTheFirstOperationProblem(t *testing.T) {
	bad := -1.0
	op := func(id, pool string) Operation { return Operation{ID: OperationID(id), Pool: PoolID(pool)} }
	invalid := func(id string) Operation { o := op(id, "P"); o.Demand[CPU] = bad; return o }
	for name, tc := range map[string]struct {
		ops     []Operation
		want    error
		message string
	}{
		"clash before a missing pool":    {[]Operation{op("P", "P"), op("b", "nope")}, ErrInvalidOperation, `operation id "P" is also a pool name`},
		"missing pool before a clash":    {[]Operation{op("a", "nope"), op("P", "P")}, ErrInvalidOperation, `pool "nope" does not exist`},
		"clash and missing pool at once": {[]Operation{op("P", "nope")}, ErrInvalidOperation, `operation id "P" is also a pool name`},
		"clash before a duplicate":       {[]Operation{op("a", "P"), op("P", "P"), op("a", "P")}, ErrInvalidOperation, `operation id "P" is also a pool name`},
		"duplicate before a clash":       {[]Operation{op("a", "P"), op("a", "P"), op("P", "P")}, ErrDuplicateOperation, `operation "a" is listed twice`},
		"clash before an invalid one":    {[]Operation{op("P", "P"), invalid("b")}, ErrInvalidOperation, `operation id "P" is also a pool name`},
		"invalid one before a clash":     {[]Operation{invalid("a"), op("P", "P")}, ErrInvalidOperation, `operation "a" demand`},
		"the first of two clashes":       {[]Operation{op("a", "P"), op("Q", "P"), op("P", "P")}, ErrInvalidOperation, `operation id "Q" is also a pool name`},
	} {
		t.Run(name, func(t *testing.T) {
			snap := &Snapshot{Cluster: Cluster{Total: res(100, 100, 1000)}, Tree: DefaultTreeConfig(),
				Pools: []PoolConfig{{Name: "P"}, {Name: "Q"}}, Operations: tc.ops}
			_, err := Update(snap, nil)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("error %v, want %v mentioning %q", err, tc.want, tc.message)
			}
		})
	}
}
