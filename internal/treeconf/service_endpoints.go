package treeconf

import (
	"github.com/nats-io/nats.go/micro"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// change builds the Change of a set request.
func change(key, value, config string, expected uint64) Change {
	return Change{Key: key, Value: value, Document: []byte(config), HasDocument: config != "", ExpectedRevision: expected}
}

func treeDoc(e Entry) *pb.TreeDocument {
	return &pb.TreeDocument{Tree: e.Key.Tree, Config: string(e.Value), Revision: e.Revision}
}

func poolDoc(e Entry) *pb.PoolDocument {
	return &pb.PoolDocument{Tree: e.Key.Tree, Pool: e.Key.Pool, Config: string(e.Value), Revision: e.Revision}
}

func (h *handlers) listTrees(req micro.Request) {
	in := &pb.ListTreesRequest{}
	if !h.decode(req, in) {
		return
	}
	ctx, cancel := h.ctx()
	defer cancel()
	list, cl, err := h.admin.ListTrees(ctx)
	out := &pb.ListTreesResponse{DefaultTree: cl.DefaultTree}
	for _, e := range list {
		out.Trees = append(out.Trees, treeDoc(e))
	}
	h.reply(req, out, err)
}

func (h *handlers) apply(req micro.Request) {
	in := &pb.ApplyRequest{}
	if !h.decode(req, in) {
		return
	}
	ctx, cancel := h.ctx()
	defer cancel()
	res, err := h.admin.Apply(ctx, []byte(in.GetDocument()), in.GetPrune(), in.GetDryRun())
	h.reply(req, ApplyProto(res), err)
}

// ApplyProto converts an ApplyResult to its wire form.
func ApplyProto(res ApplyResult) *pb.ApplyResponse {
	out := &pb.ApplyResponse{Applied: res.Applied}
	for _, d := range res.Changes {
		out.Changes = append(out.Changes, &pb.ConfigChange{
			Action: actionProto(d.Action), Kind: kindProto(d.Key.Kind), Tree: d.Key.Tree, Pool: d.Key.Pool,
			Before: string(d.Before), After: string(d.After), Keys: d.Keys, Revision: d.Revision,
		})
	}
	return out
}

func actionProto(a Action) pb.ConfigChangeAction {
	switch a {
	case ActionCreate:
		return pb.ConfigChangeAction_CONFIG_CHANGE_ACTION_CREATE
	case ActionUpdate:
		return pb.ConfigChangeAction_CONFIG_CHANGE_ACTION_UPDATE
	case ActionRemove:
		return pb.ConfigChangeAction_CONFIG_CHANGE_ACTION_REMOVE
	}
	return pb.ConfigChangeAction_CONFIG_CHANGE_ACTION_UNSPECIFIED
}

func kindProto(k subjects.ConfigKeyKind) pb.ConfigObjectKind {
	switch k {
	case subjects.ConfigKeyTree:
		return pb.ConfigObjectKind_CONFIG_OBJECT_KIND_TREE
	case subjects.ConfigKeyPool:
		return pb.ConfigObjectKind_CONFIG_OBJECT_KIND_POOL
	}
	return pb.ConfigObjectKind_CONFIG_OBJECT_KIND_CLUSTER
}

func (h *handlers) getCluster(req micro.Request) {
	in := &pb.GetClusterRequest{}
	if !h.decode(req, in) {
		return
	}
	ctx, cancel := h.ctx()
	defer cancel()
	e, err := h.admin.GetCluster(ctx)
	h.reply(req, &pb.ClusterDocument{Config: string(e.Value), Revision: e.Revision}, err)
}

func (h *handlers) setCluster(req micro.Request) {
	in := &pb.SetClusterRequest{}
	if !h.decode(req, in) {
		return
	}
	ctx, cancel := h.ctx()
	defer cancel()
	e, err := h.admin.SetCluster(ctx, change(in.GetKey(), in.GetValue(), in.GetConfig(), in.GetExpectedRevision()))
	h.reply(req, &pb.ClusterDocument{Config: string(e.Value), Revision: e.Revision}, err)
}

func (h *handlers) createTree(req micro.Request) {
	in := &pb.CreateTreeRequest{}
	if !h.decode(req, in) {
		return
	}
	tree, ok := h.treeSubject(req, in.GetTree())
	if !ok {
		return
	}
	ctx, cancel := h.ctx()
	defer cancel()
	e, err := h.admin.CreateTree(ctx, tree, []byte(in.GetConfig()))
	h.reply(req, treeDoc(e), err)
}

func (h *handlers) getTree(req micro.Request) {
	in := &pb.GetTreeRequest{}
	if !h.decode(req, in) {
		return
	}
	tree, ok := h.treeSubject(req, in.GetTree())
	if !ok {
		return
	}
	ctx, cancel := h.ctx()
	defer cancel()
	e, err := h.admin.GetTree(ctx, tree)
	h.reply(req, treeDoc(e), err)
}

func (h *handlers) setTree(req micro.Request) {
	in := &pb.SetTreeRequest{}
	if !h.decode(req, in) {
		return
	}
	tree, ok := h.treeSubject(req, in.GetTree())
	if !ok {
		return
	}
	ctx, cancel := h.ctx()
	defer cancel()
	e, err := h.admin.SetTree(ctx, tree, change(in.GetKey(), in.GetValue(), in.GetConfig(), in.GetExpectedRevision()))
	h.reply(req, treeDoc(e), err)
}

func (h *handlers) removeTree(req micro.Request) {
	in := &pb.RemoveTreeRequest{}
	if !h.decode(req, in) {
		return
	}
	tree, ok := h.treeSubject(req, in.GetTree())
	if !ok {
		return
	}
	ctx, cancel := h.ctx()
	defer cancel()
	rev, err := h.admin.RemoveTree(ctx, tree, in.GetExpectedRevision())
	h.reply(req, &pb.RemoveTreeResponse{Tree: tree, Revision: rev}, err)
}

func (h *handlers) listPools(req micro.Request) {
	in := &pb.ListPoolsRequest{}
	if !h.decode(req, in) {
		return
	}
	tree, ok := h.treeSubject(req, in.GetTree())
	if !ok {
		return
	}
	ctx, cancel := h.ctx()
	defer cancel()
	list, err := h.admin.ListPools(ctx, tree)
	out := &pb.ListPoolsResponse{}
	for _, e := range list {
		out.Pools = append(out.Pools, poolDoc(e))
	}
	h.reply(req, out, err)
}

func (h *handlers) createPool(req micro.Request) {
	in := &pb.CreatePoolRequest{}
	if !h.decode(req, in) {
		return
	}
	tree, pool, ok := h.poolSubject(req, in.GetTree(), in.GetPool())
	if !ok {
		return
	}
	ctx, cancel := h.ctx()
	defer cancel()
	e, err := h.admin.CreatePool(ctx, tree, pool, []byte(in.GetConfig()))
	h.reply(req, poolDoc(e), err)
}

func (h *handlers) getPool(req micro.Request) {
	in := &pb.GetPoolRequest{}
	if !h.decode(req, in) {
		return
	}
	tree, pool, ok := h.poolSubject(req, in.GetTree(), in.GetPool())
	if !ok {
		return
	}
	ctx, cancel := h.ctx()
	defer cancel()
	e, err := h.admin.GetPool(ctx, tree, pool)
	h.reply(req, poolDoc(e), err)
}

func (h *handlers) setPool(req micro.Request) {
	in := &pb.SetPoolRequest{}
	if !h.decode(req, in) {
		return
	}
	tree, pool, ok := h.poolSubject(req, in.GetTree(), in.GetPool())
	if !ok {
		return
	}
	ctx, cancel := h.ctx()
	defer cancel()
	e, err := h.admin.SetPool(ctx, tree, pool, change(in.GetKey(), in.GetValue(), in.GetConfig(), in.GetExpectedRevision()))
	h.reply(req, poolDoc(e), err)
}

func (h *handlers) removePool(req micro.Request) {
	in := &pb.RemovePoolRequest{}
	if !h.decode(req, in) {
		return
	}
	tree, pool, ok := h.poolSubject(req, in.GetTree(), in.GetPool())
	if !ok {
		return
	}
	ctx, cancel := h.ctx()
	defer cancel()
	rev, err := h.admin.RemovePool(ctx, tree, pool, in.GetExpectedRevision())
	h.reply(req, &pb.RemovePoolResponse{Tree: tree, Pool: pool, Revision: rev}, err)
}
