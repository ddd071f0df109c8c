package treeconf

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error the package returns for a refused request
// wraps one of them.
var (
	// ErrInvalid: a configuration that breaks a rule (every *RuleError).
	ErrInvalid = errors.New("treeconf: invalid configuration")
	// ErrInUse: a removal refused because the object still has children,
	// pools, operations or references (RuleErrors of those rules wrap it
	// besides ErrInvalid).
	ErrInUse = errors.New("treeconf: still in use")
	// ErrNotFound: the tree or pool does not exist.
	ErrNotFound = errors.New("treeconf: not found")
	// ErrExists: the tree or pool already exists.
	ErrExists = errors.New("treeconf: already exists")
	// ErrConflict: a compare-and-set write lost (every *ConflictError).
	ErrConflict = errors.New("treeconf: revision conflict")
	// ErrStore: the bucket could not be read or written.
	ErrStore = errors.New("treeconf: store")
)

// Rule names a write-time validation rule. The names travel in
// sharetree.v1.Error.rule.
type Rule string

// The rules.
const (
	// RuleGuaranteeSum: children's strong guarantees sum above their
	// parent's in some resource.
	RuleGuaranteeSum Rule = "guarantee_sum"
	// RuleRunningAboveTotal: max_running_operation_count above
	// max_operation_count (of a pool, its ephemeral sub-pools or the tree,
	// with the tree's per-pool defaults where a pool sets none).
	RuleRunningAboveTotal Rule = "running_above_total"
	// RuleMainResource: a strong or burst guarantee that does not name the
	// tree's main_resource.
	RuleMainResource Rule = "main_resource"
	// RuleBurstOnRelaxed: burst settings on a relaxed integral pool.
	RuleBurstOnRelaxed Rule = "burst_on_relaxed"
	// RuleWeight: a weight that is not a positive finite number (within the
	// engine's bounds).
	RuleWeight Rule = "weight"
	// RuleUnknownKey: a key the configuration format does not define there.
	RuleUnknownKey Rule = "unknown_key"
	// RuleInvalidValue: a value of the wrong type or out of its range, or a
	// document that does not parse.
	RuleInvalidValue Rule = "invalid_value"
	// RuleParentMissing: a pool whose parent does not exist.
	RuleParentMissing Rule = "parent_missing"
	// RuleCycle: pools that are their own ancestors.
	RuleCycle Rule = "parent_cycle"
	// RuleDuplicateName: a tree or pool name that is not unique.
	RuleDuplicateName Rule = "duplicate_name"
	// RuleAggressiveThreshold: aggressive_preemption_satisfaction_threshold
	// above preemption_satisfaction_threshold.
	RuleAggressiveThreshold Rule = "aggressive_threshold"
	// RuleUnknownPreset: config_presets names a preset the tree's
	// pool_config_presets does not define.
	RuleUnknownPreset Rule = "unknown_preset"
	// RuleNodeTagFilter: a node_tag_filter that does not parse.
	RuleNodeTagFilter Rule = "node_tag_filter"
	// RuleName: a tree or pool name that is not a valid subject token.
	RuleName Rule = "name"
	// RuleDefaultTree: default_tree names no tree, or the default tree is
	// being removed while other trees exist.
	RuleDefaultTree Rule = "default_tree"
	// RuleDefaultParentPool: default_parent_pool names no pool of the tree.
	RuleDefaultParentPool Rule = "default_parent_pool"
	// RuleOffloading: offloading_settings names a tree or pool that does
	// not exist, or the pool's own tree.
	RuleOffloading Rule = "offloading"
	// RuleTreeStructure: a pool tree the engine refuses (a fifo pool with
	// child pools or ephemeral sub-pools).
	RuleTreeStructure Rule = "tree_structure"
	// RulePoolHasChildren: removing a pool that has child pools.
	RulePoolHasChildren Rule = "pool_has_children"
	// RulePoolHasOperations: removing a pool that has operations.
	RulePoolHasOperations Rule = "pool_has_operations"
	// RuleTreeHasPools: removing a tree that has pools.
	RuleTreeHasPools Rule = "tree_has_pools"
	// RuleTreeHasOperations: removing a tree that has operations.
	RuleTreeHasOperations Rule = "tree_has_operations"
)

// inUse reports whether the rule refuses a removal.
func (r Rule) inUse() bool {
	switch r {
	case RulePoolHasChildren, RulePoolHasOperations, RuleTreeHasPools, RuleTreeHasOperations:
		return true
	}
	return false
}

// RuleError is a write refused by a rule: the rule, the object at fault
// and a message naming the values.
type RuleError struct {
	Rule Rule
	// Tree and Pool name the object at fault ("" when not applicable).
	Tree, Pool string
	// Key is the path of the key at fault inside the object's document
	// ("strong_guarantee_resources", "integral_guarantees.guarantee_type").
	Key string
	// Msg names the values ("children's strong guarantees of cpu sum to
	// 120 (a 80, b 40), above the parent's 100").
	Msg string
}

// Error returns `tree "T" pool "P" KEY: MSG [rule RULE]`, or `MSG [rule
// RULE]` when it names no tree, pool or key (a cluster document that does
// not parse).
func (e *RuleError) Error() string {
	var b strings.Builder
	if e.Tree != "" {
		fmt.Fprintf(&b, "tree %q ", e.Tree)
	}
	if e.Pool != "" {
		fmt.Fprintf(&b, "pool %q ", e.Pool)
	}
	if e.Key != "" {
		b.WriteString(e.Key + " ")
	}
	if b.Len() == 0 {
		return fmt.Sprintf("treeconf: %s [rule %s]", e.Msg, e.Rule)
	}
	return fmt.Sprintf("treeconf: %s: %s [rule %s]", strings.TrimSuffix(b.String(), " "), e.Msg, e.Rule)
}

// Unwrap returns ErrInvalid, and ErrInUse for the removal rules or
// ErrExists for duplicate names.
func (e *RuleError) Unwrap() []error {
	switch {
	case e.Rule.inUse():
		return []error{ErrInvalid, ErrInUse}
	case e.Rule == RuleDuplicateName:
		return []error{ErrInvalid, ErrExists}
	}
	return []error{ErrInvalid}
}

// ConflictError is a compare-and-set write that lost: the key is not at the
// revision the writer expected.
type ConflictError struct {
	// Key is the bucket key.
	Key string
	// Expected is the revision the writer expected (0: that the key did
	// not exist); Actual the revision found, when known (0: unknown or
	// absent).
	Expected, Actual uint64
}

func (e *ConflictError) Error() string {
	switch {
	case e.Actual != 0:
		return fmt.Sprintf("treeconf: key %q changed: expected revision %d, it is at revision %d", e.Key, e.Expected, e.Actual)
	case e.Expected == 0:
		return fmt.Sprintf("treeconf: key %q was created by another writer", e.Key)
	}
	return fmt.Sprintf("treeconf: key %q changed: expected revision %d", e.Key, e.Expected)
}

// Unwrap returns ErrConflict.
func (e *ConflictError) Unwrap() error { return ErrConflict }

func ruleErr(rule Rule, tree, pool, key, format string, args ...any) *RuleError {
	return &RuleError{Rule: rule, Tree: tree, Pool: pool, Key: key, Msg: fmt.Sprintf(format, args...)}
}
