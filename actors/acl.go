package actors

import (
	"slices"
	"strings"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/scheduler"
)

// aclIndex answers who may submit into a tree's pools (their submit_acl
// options): the nearest pool from the one submitted into up to the root
// whose options have a list decides ("*" admits anyone); with none on the
// way, anyone may. A nil index (no pool of the tree has a list) admits
// everyone.
type aclIndex struct {
	parents map[scheduler.PoolID]scheduler.PoolID
	lists   map[scheduler.PoolID][]string
}

// newACLIndex indexes spec's lists; nil when it has none.
func newACLIndex(spec *TreeSpec) *aclIndex {
	var x *aclIndex
	for name, o := range spec.PoolOptions {
		if o.SubmitACL == nil {
			continue
		}
		if x == nil {
			x = &aclIndex{parents: make(map[scheduler.PoolID]scheduler.PoolID, len(spec.Pools)), lists: map[scheduler.PoolID][]string{}}
		}
		x.lists[name] = o.SubmitACL
	}
	if x != nil {
		for _, p := range spec.Pools {
			x.parents[p.Name] = p.Parent
		}
	}
	return x
}

// deny returns the refusal of user's operation in pool ("" is the root) of
// tree, naming field, or nil when the user may submit there.
func (x *aclIndex) deny(tree string, pool scheduler.PoolID, user, field string) *pb.Error {
	if x == nil {
		return nil
	}
	for p, seen := pool, 0; p != "" && seen <= len(x.parents); p, seen = x.parents[p], seen+1 {
		list, ok := x.lists[p]
		if !ok {
			continue
		}
		if slices.Contains(list, user) || slices.Contains(list, "*") {
			return nil
		}
		who := "nobody"
		if len(list) > 0 {
			who = strings.Join(list, ", ")
		}
		at := ""
		if p != pool {
			at = " (by the submit_acl of its ancestor " + string(p) + ")"
		}
		return pbErr(pb.ErrorCode_ERROR_CODE_PERMISSION_DENIED, field,
			"%s: user %q may not submit into pool %q of tree %s%s: the list admits %s", field, user, pool, tree, at, who)
	}
	return nil
}
