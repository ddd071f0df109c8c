package scenario

import (
	"errors"
	"strings"
	"testing"
)

// head is a valid beginning most bad inputs extend.
const head = "version: 1\ncluster: {resources: {cpu: 10, user_slots: 10}}\n"

func TestParseBadInputs(t *testing.T) {
	tests := []struct {
		name, src, path, msg string
	}{
		// Whole-file problems.
		{"empty document", "", "", "empty document"},
		{"comments only", "# nothing\n", "", "empty document"},
		{"null document", "~\n", "", "empty document"},
		{"syntax error", "version: 1\ncluster: {resources: [\n", "", "line"},
		{"not a mapping", "- version\n", "", "want a mapping at the top level, got a list"},
		{"two documents", head + "---\n" + head, "", "more than one YAML document"},

		// Keys.
		{"unknown top-level key", head + "foo: 1\n", "foo", `line 3: unknown key "foo"`},
		{"unknown pool key", head + "pools: [{name: a, wieght: 2}]\n", "pools[0].wieght", `unknown key "wieght"`},
		{"unknown integral key", head + "pools: [{name: a, integral_guarantees: {flow: {cpu: 1}}}]\n",
			"pools[0].integral_guarantees.flow", `unknown key "flow"`},
		{"unknown job key", head + "operations: [{id: o, jobs: [{count: 1, resources: {cpu: 1}, cnt: 2}]}]\n",
			"operations[0].jobs[0].cnt", `unknown key "cnt"`},
		{"unknown tree integral key", head + "tree: {integral_guarantees: {smooth: 1s}}\n",
			"tree.integral_guarantees.smooth", `unknown key "smooth"`},
		{"pool key in set.operations", head + "operations: [{id: o}]\nsteps: [{set: {operations: {o: {pool: x}}}}]\n",
			"steps[0].set.operations.o.pool", `unknown key "pool"`},
		{"unknown step key", head + "steps: [{sett: {}}]\n", "steps[0].sett", `unknown key "sett"`},
		{"duplicate key", head + "version: 1\n", "version", "duplicate key \"version\" (first at line 1)"},
		{"key and its alias", head + "pools: [{name: a, strong_guarantee_resources: {cpu: 1}, min_share_resources: {cpu: 1}}]\n",
			"pools[0].min_share_resources", "same key"},
		{"merge key", head + "pools: [{<<: {name: a}}]\n", "pools[0].<<", "merge keys"},
		{"missing version", "cluster: {resources: {cpu: 1}}\n", "version", `missing required key "version"`},
		{"missing cluster", "version: 1\n", "cluster", `missing required key "cluster"`},
		{"missing pool name", head + "pools: [{weight: 1}]\n", "pools[0].name", `missing required key "name"`},
		{"missing operation id", head + "operations: [{pool: \"\"}]\n", "operations[0].id", `missing required key "id"`},
		{"missing expect value", head + "expect: [{element: a, attribute: b}]\n", "expect[0].value", `missing required key "value"`},

		// Types and values.
		{"version 2", "version: 2\ncluster: {resources: {cpu: 1}}\n", "version", "unsupported version 2"},
		{"version as string", "version: \"1\"\ncluster: {resources: {cpu: 1}}\n", "version", "want an integer, got a string"},
		{"weight as string", head + "pools: [{name: a, weight: heavy}]\n", "pools[0].weight", `want a number, got a string ("heavy")`},
		{"pools as mapping", head + "pools: {a: {}}\n", "pools", "want a list, got a mapping"},
		{"integer wanted", head + "pools: [{name: a, max_operation_count: 1.5}]\n", "pools[0].max_operation_count", "want an integer"},
		{"boolean wanted", head + "operations: [{id: o, is_gang: \"yes\"}]\n", "operations[0].is_gang", "want true or false"},
		{"node amount past the largest", "version: 1\ncluster: {nodes: [{count: 2, resources: {cpu: 1e308}}]}\n",
			"cluster.nodes[0].resources.cpu", "resource amount 1e308 must be 0 or a number in [1e-09, 1e+18]"},
		{"negative resource", "version: 1\ncluster: {resources: {cpu: -1}}\n", "cluster.resources.cpu", "must be 0 or a number in [1e-09, 1e+18]"},
		{"infinite resource", "version: 1\ncluster: {resources: {cpu: .inf}}\n", "cluster.resources.cpu", "want a finite number"},
		{"bad resource name", "version: 1\ncluster: {resources: {disk: 1}}\n", "cluster.resources.disk", `unknown resource: "disk"`},
		{"bad suffix", "version: 1\ncluster: {resources: {memory: 10Mb}}\n", "cluster.resources.memory", "binary suffix Ki, Mi, Gi or Ti"},
		{"resource as list", "version: 1\ncluster: {resources: {cpu: [1]}}\n", "cluster.resources.cpu", "want a resource amount"},
		{"bad main resource", head + "tree: {main_resource: disk}\n", "tree.main_resource", "unknown resource"},
		{"bad duration", head + "update: {elapsed: 5 minutes}\n", "update.elapsed", `bad duration "5 minutes"`},
		{"negative duration", head + "update: {elapsed: -1s}\n", "update.elapsed", "must not be negative"},
		{"duration past the largest", head + "update: {elapsed: 9223372036.854775807}\n", "update.elapsed", "duration 9223372036.854775807 s is out of range"},
		{"largest duration", head + "update: {elapsed: 1e10}\n", "update.elapsed", "out of range"},
		{"negative start time", head + "operations: [{id: o, start_time: -2}]\n", "operations[0].start_time", "must not be negative"},
		{"tolerance zero", head + "tolerance: 0\n", "tolerance", "must be > 0"},
		{"tolerance not numeric", head + "tolerance: tight\n", "tolerance", "want a number"},
		{"expect value bool", head + "expect: [{element: a, attribute: b, value: true}]\n", "expect[0].value", "want a number, a string or a map"},
		{"expect share bad resource", head + "expect: [{element: a, attribute: b, value: {disk: 1}}]\n", "expect[0].value.disk", "unknown resource"},

		// Cluster.
		{"resources and nodes", "version: 1\ncluster: {resources: {cpu: 1}, nodes: [{resources: {cpu: 1}}]}\n", "cluster", "not both"},
		{"neither resources nor nodes", "version: 1\ncluster: {}\n", "cluster", "exactly one of resources and nodes"},
		{"node count 0", "version: 1\ncluster: {nodes: [{count: 0, resources: {cpu: 1}}]}\n", "cluster.nodes[0].count", "count must be >= 1"},
		{"node without resources", "version: 1\ncluster: {nodes: [{count: 2}]}\n", "cluster.nodes[0].resources", "missing required key"},
		{"node tags not strings", "version: 1\ncluster: {nodes: [{resources: {cpu: 1}, tags: [1]}]}\n", "cluster.nodes[0].tags[0]", "want a string"},
		{"node tag no filter can name", "version: 1\ncluster: {nodes: [{resources: {cpu: 1}, tags: [ssd, \"gpu ssd\"]}]}\n", "cluster.nodes[0].tags[1]", `tag "gpu ssd" has ' '`},

		// Tree.
		{"aggressive threshold above normal", head + "tree: {preemption_satisfaction_threshold: 0.5, aggressive_preemption_satisfaction_threshold: 0.7}\n",
			"tree", "aggressive_preemption_satisfaction_threshold: must be in [0, preemption_satisfaction_threshold = 0.5], got 0.7"},
		{"tree tolerance above 1", head + "tree: {fair_share_starvation_tolerance: 1.5}\n", "tree", "fair_share_starvation_tolerance"},

		// Pools.
		{"unknown pool parent", head + "pools: [{name: a, parent: nope}]\n", "pools[0].parent", `parent "nope" does not exist`},
		{"parent listed after child", head + "pools: [{name: b, parent: a}, {name: a}]\n", "pools[0].parent",
			`parent "a" must be listed before its child`},
		{"duplicate pool", head + "pools: [{name: a}, {name: a}]\n", "pools[1].name", `duplicate pool name "a" (first at pools[0])`},
		{"bad mode", head + "pools: [{name: a, mode: lifo}]\n", "pools[0].mode", `unknown mode "lifo"`},
		{"bad guarantee_type", head + "pools: [{name: a, integral_guarantees: {guarantee_type: strong}}]\n",
			"pools[0].integral_guarantees.guarantee_type", `unknown guarantee_type "strong"`},
		{"bad fifo sort parameter", head + "pools: [{name: a, fifo_sort_parameters: [weight, size]}]\n",
			"pools[0].fifo_sort_parameters[1]", `unknown fifo sort parameter "size"`},
		{"burst resources on relaxed pool", head + "pools: [{name: a, integral_guarantees: {guarantee_type: relaxed, burst_guarantee_resources: {cpu: 1}}}]\n",
			"pools[0]", "a relaxed pool cannot have a burst guarantee"},
		{"pool weight 0", head + "pools: [{name: a}, {name: b, weight: 0}]\n", "pools[1]", `pool "b" weight: must be a finite number in`},
		{"guarantee without main resource", head + "pools: [{name: a, strong_guarantee_resources: {user_slots: 5}}]\n",
			"pools[0]", "a guarantee must name the tree's main resource cpu"},
		{"reserved pool name", head + "pools: [{name: <Root>}]\n", "pools[0]", "reserved or empty"},
		{"volume past the largest", head + "pools: [{name: a, accumulated_resource_volume: {memory: 1e29}}]\n",
			"pools[0].accumulated_resource_volume.memory", "accumulated volume 1e29 must be a number in [0, 1e+28]"},
		{"negative volume", head + "pools: [{name: a, accumulated_resource_volume: {cpu: -1}}]\n",
			"pools[0].accumulated_resource_volume.cpu", "accumulated volume -1 must be a number in [0, 1e+28]"},
		{"set.pools volume past the largest", head + "pools: [{name: a}]\nsteps: [{set: {pools: {a: {accumulated_resource_volume: {cpu: 2e28}}}}}]\n",
			"steps[0].set.pools.a.accumulated_resource_volume.cpu", "accumulated volume 2e28 must be"},
		{"child of a fifo pool", head + "pools: [{name: a, mode: fifo}, {name: b}, {name: c, parent: a}]\n",
			"pools[2].parent", `parent "a" is a fifo pool; a fifo pool holds operations only`},

		// Operations.
		{"duplicate operation id", head + "operations: [{id: o}, {id: o}]\n", "operations[1].id", `duplicate operation id "o" (first at operations[0])`},
		{"operation in unknown pool", head + "operations: [{id: o, pool: nope}]\n", "operations[0].pool", `pool "nope" does not exist`},
		{"jobs with demand", head + "operations: [{id: o, demand: {cpu: 1}, jobs: [{count: 1, resources: {cpu: 1}}]}]\n",
			"operations[0].jobs", "jobs cannot be combined with demand or usage"},
		{"running above count", head + "operations: [{id: o, jobs: [{count: 1, resources: {cpu: 1}}, {count: 3, resources: {cpu: 1}, running: 4}]}]\n",
			"operations[0].jobs[1].running", "running 4 exceeds count 3"},
		{"negative job count", head + "operations: [{id: o, jobs: [{count: -1, resources: {cpu: 1}}]}]\n",
			"operations[0].jobs[0].count", "count must be in"},
		{"usage above demand", head + "operations: [{id: o, demand: {cpu: 1, memory: 5}, usage: {memory: 6}}]\n",
			"operations[0].usage", "usage of memory (6) exceeds demand (5)"},
		{"operation weight 0", head + "operations: [{id: o, weight: 0}]\n", "operations[0]", `operation "o" weight: must be`},
		{"empty operation id", head + "operations: [{id: \"\"}]\n", "operations[0]", "operation id is empty"},
		{"operation id is a pool name", head + "pools: [{name: a}]\noperations: [{id: a, pool: a}]\n",
			"operations[0].id", `line 4: operation id "a" is also a pool name`},
		{"root operation id", head + "operations: [{id: \"<Root>\"}]\n", "operations[0]", `operation id "<Root>" is reserved for the root`},

		// Update.
		{"repeat 0", head + "update: {repeat: 0}\n", "update.repeat", "repeat must be in [1, 1000000], got 0"},
		{"repeat too large", head + "steps: [{update: {repeat: 1000001}}]\n", "steps[0].update.repeat", "repeat must be in"},

		// Steps.
		{"empty steps", head + "steps: []\n", "steps", "at least one step"},
		{"set.pools unknown pool", head + "pools: [{name: a}]\nsteps: [{set: {pools: {b: {weight: 2}}}}]\n",
			"steps[0].set.pools.b", `unknown pool "b"`},
		{"set.pools parent", head + "pools: [{name: a}]\nsteps: [{set: {pools: {a: {parent: x}}}}]\n",
			"steps[0].set.pools.a.parent", `unknown key "parent"`},
		{"set.pools invalid weight", head + "pools: [{name: a}]\nsteps: [{}, {set: {pools: {a: {weight: 0}}}}]\n",
			"steps[1].set.pools.a", "weight: must be"},
		{"set.tree invalid", head + "steps: [{set: {tree: {integral_guarantees: {relaxed_share_multiplier_limit: 11}}}}]\n",
			"steps[0].set.tree", "relaxed_share_multiplier_limit: must be in [1, 10]"},
		{"set.tree main resource breaks a guarantee", head + "pools: [{name: a, strong_guarantee_resources: {cpu: 1}}]\nsteps: [{set: {tree: {main_resource: user_slots}}}]\n",
			"steps[0].set.tree", "main resource user_slots"},
		{"set.operations unknown op", head + "operations: [{id: o}]\nsteps: [{set: {operations: {p: {weight: 2}}}}]\n",
			"steps[0].set.operations.p", `operation "p" is not present at this step`},
		{"set.operations op added later in the step", head + "steps: [{set: {operations: {n: {weight: 2}}}, add_operations: [{id: n}]}]\n",
			"steps[0].set.operations.n", "is not present"},
		{"set.operations usage above demand", head + "operations: [{id: o, demand: {cpu: 2}}]\nsteps: [{set: {operations: {o: {usage: {cpu: 3}}}}}]\n",
			"steps[0].set.operations.o.usage", "usage of cpu (3) exceeds demand (2)"},
		{"remove unknown op", head + "operations: [{id: o}]\nsteps: [{remove_operations: [o]}, {remove_operations: [o]}]\n",
			"steps[1].remove_operations[0]", `operation "o" is not present at this step`},
		{"add existing op", head + "operations: [{id: o}]\nsteps: [{}, {add_operations: [{id: o}]}]\n",
			"steps[1].add_operations[0].id", `operation "o" already exists`},
		{"add op twice in one step", head + "steps: [{add_operations: [{id: n}, {id: n}]}]\n",
			"steps[0].add_operations[1].id", "already exists"},
		{"set.pools makes a parent fifo", head + "pools: [{name: a}, {name: b, parent: a}]\nsteps: [{}, {set: {pools: {a: {mode: fifo}}}}]\n",
			"steps[1].set.pools.a.mode", `pool "a" cannot be a fifo pool: it has child pool "b"`},
		{"add op named as a pool", head + "pools: [{name: a}]\nsteps: [{add_operations: [{id: a}]}]\n",
			"steps[0].add_operations[0].id", `operation id "a" is also a pool name`},
		{"add op in unknown pool", head + "steps: [{add_operations: [{id: n, pool: nope}]}]\n",
			"steps[0].add_operations[0].pool", `pool "nope" does not exist`},
	}
	if len(tests) < 25 {
		t.Fatalf("only %d cases", len(tests))
	}
	seen := make(map[string]bool, len(tests))
	for _, tc := range tests {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("bad.yaml", []byte(tc.src))
			if err == nil {
				t.Fatalf("parsed without error: %+v", f)
			}
			if !errors.Is(err, ErrInvalidScenario) {
				t.Fatalf("error %v does not wrap ErrInvalidScenario", err)
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not *Error", err)
			}
			if se.File != "bad.yaml" {
				t.Errorf("File = %q", se.File)
			}
			if se.Path != tc.path {
				t.Errorf("Path = %q, want %q (error: %v)", se.Path, tc.path, err)
			}
			if !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("Msg = %q, want it to contain %q", se.Msg, tc.msg)
			}
		})
	}
}

// TestParseBoundsRunningJobs checks the bound on the running jobs a
// scenario holds in all (operations, and each step's copy of them), lowered
// here so the test stays small: without it a few hundred bytes with a
// million running jobs and many steps, or many such operations, expanded to
// gigabytes.
func TestParseBoundsRunningJobs(t *testing.T) {
	defer func(n int) { maxRunningJobs = n }(maxRunningJobs)
	maxRunningJobs = 20
	ops := "operations: [{id: o, jobs: [{count: 4, running: 4, resources: {cpu: 1}}]}]\n"
	for _, tc := range []struct{ name, src, path string }{
		// 4 for the operation, then 4 for each step's copy.
		{"steps", head + ops + "steps: [{}, {}, {}, {}, {}]\n", "steps[4]"},
		{"operations", head + "operations: [{id: a, jobs: [{count: 9, running: 9, resources: {cpu: 1}}]}, " +
			"{id: b, jobs: [{count: 12, running: 12, resources: {cpu: 1}}]}]\n", "operations[1]"},
		// 4 for the operation, 17 for the jobs the step sets.
		{"set jobs", head + ops + "steps: [{set: {operations: {o: {jobs: [{count: 17, running: 17, resources: {cpu: 1}}]}}}}]\n",
			"steps[0].set.operations.o"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tc.src))
			var se *Error
			if !errors.As(err, &se) || se.Path != tc.path || !strings.Contains(se.Msg, "more than 20 running jobs") {
				t.Fatalf("error = %v, want an *Error at %q naming the bound", err, tc.path)
			}
		})
	}
	if _, err := Parse("ok.yaml", []byte(head+ops+"steps: [{}, {remove_operations: [o]}, {}, {}]\n")); err != nil {
		t.Errorf("8 running jobs in all: %v", err)
	}
}
