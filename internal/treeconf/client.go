package treeconf

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sharetree/sharetree/internal/client"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// Client calls the configuration service over NATS. A refused request is a
// *client.APIError carrying the typed Error (code, rule, field).
type Client struct {
	c *client.Client
}

// NewClient returns a client; timeout bounds each request (default 5s when
// <= 0).
func NewClient(nc *nats.Conn, timeout time.Duration) *Client {
	return &Client{c: client.New(nc, timeout)}
}

// ListTrees lists the trees and the default tree.
func (c *Client) ListTrees(ctx context.Context) (*pb.ListTreesResponse, error) {
	subj, err := subjects.Config(subjects.ConfigTrees)
	if err != nil {
		return nil, err
	}
	out := &pb.ListTreesResponse{}
	return out, c.c.Call(ctx, subj, &pb.ListTreesRequest{}, out)
}

// Apply applies a trees document.
func (c *Client) Apply(ctx context.Context, document []byte, prune, dryRun bool) (*pb.ApplyResponse, error) {
	subj, err := subjects.Config(subjects.ConfigApply)
	if err != nil {
		return nil, err
	}
	out := &pb.ApplyResponse{}
	return out, c.c.Call(ctx, subj, &pb.ApplyRequest{Document: string(document), Prune: prune, DryRun: dryRun}, out)
}

// GetCluster reads the cluster attributes.
func (c *Client) GetCluster(ctx context.Context) (*pb.ClusterDocument, error) {
	subj, err := subjects.Config(subjects.ConfigGet)
	if err != nil {
		return nil, err
	}
	out := &pb.ClusterDocument{}
	return out, c.c.Call(ctx, subj, &pb.GetClusterRequest{}, out)
}

// SetCluster changes the cluster attributes.
func (c *Client) SetCluster(ctx context.Context, req *pb.SetClusterRequest) (*pb.ClusterDocument, error) {
	subj, err := subjects.Config(subjects.ConfigSet)
	if err != nil {
		return nil, err
	}
	out := &pb.ClusterDocument{}
	return out, c.c.Call(ctx, subj, req, out)
}

// CreateTree creates a tree.
func (c *Client) CreateTree(ctx context.Context, tree, config string) (*pb.TreeDocument, error) {
	subj, err := subjects.ConfigTree(tree, subjects.TreeCreate)
	if err != nil {
		return nil, err
	}
	out := &pb.TreeDocument{}
	return out, c.c.Call(ctx, subj, &pb.CreateTreeRequest{Tree: tree, Config: config}, out)
}

// GetTree reads a tree.
func (c *Client) GetTree(ctx context.Context, tree string) (*pb.TreeDocument, error) {
	subj, err := subjects.ConfigTree(tree, subjects.TreeGet)
	if err != nil {
		return nil, err
	}
	out := &pb.TreeDocument{}
	return out, c.c.Call(ctx, subj, &pb.GetTreeRequest{Tree: tree}, out)
}

// SetTree changes a tree.
func (c *Client) SetTree(ctx context.Context, req *pb.SetTreeRequest) (*pb.TreeDocument, error) {
	subj, err := subjects.ConfigTree(req.GetTree(), subjects.TreeSet)
	if err != nil {
		return nil, err
	}
	out := &pb.TreeDocument{}
	return out, c.c.Call(ctx, subj, req, out)
}

// RemoveTree removes a tree.
func (c *Client) RemoveTree(ctx context.Context, tree string, expectedRevision uint64) (*pb.RemoveTreeResponse, error) {
	subj, err := subjects.ConfigTree(tree, subjects.TreeRemove)
	if err != nil {
		return nil, err
	}
	out := &pb.RemoveTreeResponse{}
	return out, c.c.Call(ctx, subj, &pb.RemoveTreeRequest{Tree: tree, ExpectedRevision: expectedRevision}, out)
}

// ListPools lists a tree's pools, parents first.
func (c *Client) ListPools(ctx context.Context, tree string) (*pb.ListPoolsResponse, error) {
	subj, err := subjects.ConfigTree(tree, subjects.TreePools)
	if err != nil {
		return nil, err
	}
	out := &pb.ListPoolsResponse{}
	return out, c.c.Call(ctx, subj, &pb.ListPoolsRequest{Tree: tree}, out)
}

// CreatePool creates a pool.
func (c *Client) CreatePool(ctx context.Context, tree, pool, config string) (*pb.PoolDocument, error) {
	subj, err := subjects.ConfigPool(tree, pool, subjects.PoolCreate)
	if err != nil {
		return nil, err
	}
	out := &pb.PoolDocument{}
	return out, c.c.Call(ctx, subj, &pb.CreatePoolRequest{Tree: tree, Pool: pool, Config: config}, out)
}

// GetPool reads a pool.
func (c *Client) GetPool(ctx context.Context, tree, pool string) (*pb.PoolDocument, error) {
	subj, err := subjects.ConfigPool(tree, pool, subjects.PoolGet)
	if err != nil {
		return nil, err
	}
	out := &pb.PoolDocument{}
	return out, c.c.Call(ctx, subj, &pb.GetPoolRequest{Tree: tree, Pool: pool}, out)
}

// SetPool changes a pool.
func (c *Client) SetPool(ctx context.Context, req *pb.SetPoolRequest) (*pb.PoolDocument, error) {
	subj, err := subjects.ConfigPool(req.GetTree(), req.GetPool(), subjects.PoolSet)
	if err != nil {
		return nil, err
	}
	out := &pb.PoolDocument{}
	return out, c.c.Call(ctx, subj, req, out)
}

// RemovePool removes a pool.
func (c *Client) RemovePool(ctx context.Context, tree, pool string, expectedRevision uint64) (*pb.RemovePoolResponse, error) {
	subj, err := subjects.ConfigPool(tree, pool, subjects.PoolRemove)
	if err != nil {
		return nil, err
	}
	out := &pb.RemovePoolResponse{}
	return out, c.c.Call(ctx, subj, &pb.RemovePoolRequest{Tree: tree, Pool: pool, ExpectedRevision: expectedRevision}, out)
}
