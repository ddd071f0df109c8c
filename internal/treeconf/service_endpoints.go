package treeconf

import (
	"context"

	"github.com/nats-io/nats.go/micro"
	"google.golang.org/protobuf/proto"

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

// serve decodes a request, runs do within the request timeout and answers
// with its result or its error.
func serve[In proto.Message](h *handlers, req micro.Request, in In, do func(context.Context, In) (proto.Message, error)) {
	if !h.decode(req, in) {
		return
	}
	ctx, cancel := h.ctx()
	defer cancel()
	out, err := do(ctx, in)
	h.reply(req, out, err)
}

// treeRequest is a request about one tree, named in the subject and the
// payload.
type treeRequest interface {
	proto.Message
	GetTree() string
}

// poolRequest is a request about one pool.
type poolRequest interface {
	treeRequest
	GetPool() string
}

// serveTree is serve for a tree's subject: the tree must be named alike in
// the subject and the payload.
func serveTree[In treeRequest](h *handlers, req micro.Request, in In, do func(context.Context, string, In) (proto.Message, error)) {
	serve(h, req, in, func(ctx context.Context, in In) (proto.Message, error) {
		tree, ok := h.treeSubject(req, in.GetTree())
		if !ok {
			return nil, errAnswered
		}
		return do(ctx, tree, in)
	})
}

// servePool is serve for a pool's subject.
func servePool[In poolRequest](h *handlers, req micro.Request, in In, do func(context.Context, string, string, In) (proto.Message, error)) {
	serve(h, req, in, func(ctx context.Context, in In) (proto.Message, error) {
		tree, pool, ok := h.poolSubject(req, in.GetTree(), in.GetPool())
		if !ok {
			return nil, errAnswered
		}
		return do(ctx, tree, pool, in)
	})
}

func (h *handlers) listTrees(req micro.Request) {
	serve(h, req, &pb.ListTreesRequest{}, func(ctx context.Context, _ *pb.ListTreesRequest) (proto.Message, error) {
		list, cl, err := h.admin.ListTrees(ctx)
		out := &pb.ListTreesResponse{DefaultTree: cl.DefaultTree}
		for _, e := range list {
			out.Trees = append(out.Trees, treeDoc(e))
		}
		return out, err
	})
}

func (h *handlers) apply(req micro.Request) {
	serve(h, req, &pb.ApplyRequest{}, func(ctx context.Context, in *pb.ApplyRequest) (proto.Message, error) {
		res, err := h.admin.Apply(ctx, []byte(in.GetDocument()), in.GetPrune(), in.GetDryRun())
		return ApplyProto(res), err
	})
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

func clusterDoc(e Entry) *pb.ClusterDocument {
	return &pb.ClusterDocument{Config: string(e.Value), Revision: e.Revision}
}

func (h *handlers) getCluster(req micro.Request) {
	serve(h, req, &pb.GetClusterRequest{}, func(ctx context.Context, _ *pb.GetClusterRequest) (proto.Message, error) {
		e, err := h.admin.GetCluster(ctx)
		return clusterDoc(e), err
	})
}

func (h *handlers) setCluster(req micro.Request) {
	serve(h, req, &pb.SetClusterRequest{}, func(ctx context.Context, in *pb.SetClusterRequest) (proto.Message, error) {
		e, err := h.admin.SetCluster(ctx, change(in.GetKey(), in.GetValue(), in.GetConfig(), in.GetExpectedRevision()))
		return clusterDoc(e), err
	})
}

func (h *handlers) createTree(req micro.Request) {
	serveTree(h, req, &pb.CreateTreeRequest{}, func(ctx context.Context, tree string, in *pb.CreateTreeRequest) (proto.Message, error) {
		e, err := h.admin.CreateTree(ctx, tree, []byte(in.GetConfig()))
		return treeDoc(e), err
	})
}

func (h *handlers) getTree(req micro.Request) {
	serveTree(h, req, &pb.GetTreeRequest{}, func(ctx context.Context, tree string, _ *pb.GetTreeRequest) (proto.Message, error) {
		e, err := h.admin.GetTree(ctx, tree)
		return treeDoc(e), err
	})
}

func (h *handlers) setTree(req micro.Request) {
	serveTree(h, req, &pb.SetTreeRequest{}, func(ctx context.Context, tree string, in *pb.SetTreeRequest) (proto.Message, error) {
		e, err := h.admin.SetTree(ctx, tree, change(in.GetKey(), in.GetValue(), in.GetConfig(), in.GetExpectedRevision()))
		return treeDoc(e), err
	})
}

func (h *handlers) removeTree(req micro.Request) {
	serveTree(h, req, &pb.RemoveTreeRequest{}, func(ctx context.Context, tree string, in *pb.RemoveTreeRequest) (proto.Message, error) {
		rev, err := h.admin.RemoveTree(ctx, tree, in.GetExpectedRevision())
		return &pb.RemoveTreeResponse{Tree: tree, Revision: rev}, err
	})
}

func (h *handlers) listPools(req micro.Request) {
	serveTree(h, req, &pb.ListPoolsRequest{}, func(ctx context.Context, tree string, _ *pb.ListPoolsRequest) (proto.Message, error) {
		list, err := h.admin.ListPools(ctx, tree)
		out := &pb.ListPoolsResponse{}
		for _, e := range list {
			out.Pools = append(out.Pools, poolDoc(e))
		}
		return out, err
	})
}

func (h *handlers) createPool(req micro.Request) {
	servePool(h, req, &pb.CreatePoolRequest{}, func(ctx context.Context, tree, pool string, in *pb.CreatePoolRequest) (proto.Message, error) {
		e, err := h.admin.CreatePool(ctx, tree, pool, []byte(in.GetConfig()))
		return poolDoc(e), err
	})
}

func (h *handlers) getPool(req micro.Request) {
	servePool(h, req, &pb.GetPoolRequest{}, func(ctx context.Context, tree, pool string, _ *pb.GetPoolRequest) (proto.Message, error) {
		e, err := h.admin.GetPool(ctx, tree, pool)
		return poolDoc(e), err
	})
}

func (h *handlers) setPool(req micro.Request) {
	servePool(h, req, &pb.SetPoolRequest{}, func(ctx context.Context, tree, pool string, in *pb.SetPoolRequest) (proto.Message, error) {
		e, err := h.admin.SetPool(ctx, tree, pool, change(in.GetKey(), in.GetValue(), in.GetConfig(), in.GetExpectedRevision()))
		return poolDoc(e), err
	})
}

func (h *handlers) removePool(req micro.Request) {
	servePool(h, req, &pb.RemovePoolRequest{}, func(ctx context.Context, tree, pool string, in *pb.RemovePoolRequest) (proto.Message, error) {
		rev, err := h.admin.RemovePool(ctx, tree, pool, in.GetExpectedRevision())
		return &pb.RemovePoolResponse{Tree: tree, Pool: pool, Revision: rev}, err
	})
}
