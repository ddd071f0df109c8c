package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sharetree/sharetree/deploy/examples/graceful-service/registry"
)

// Sentinel errors; the errors Get returns wrap one of these (and the
// context's error when it ends).
var (
	// ErrNoInstances: the registry listed no instance for
	// Options.NoInstanceWait.
	ErrNoInstances = errors.New("client: no instance registered")
	// ErrFailed: the request may have been accepted and did not complete
	// (transport error from a registered instance, bad status, truncated
	// body).
	ErrFailed = errors.New("client: request failed")
	// ErrAttempts: every attempt was refused before being accepted.
	ErrAttempts = errors.New("client: out of attempts")
)

// Options configure a Client; zero fields take their defaults.
type Options struct {
	// MaxAttempts bounds the attempts of one request. Default 20.
	MaxAttempts int
	// NoInstanceWait is how long Get polls an empty registry. Default 5 s.
	NoInstanceWait time.Duration
	// PollInterval is the pause between two reads of an empty registry.
	// Default 10 ms.
	PollInterval time.Duration
}

// Response is a completed request.
type Response struct {
	// Instance is the id of the instance that answered.
	Instance string
	Body     []byte
}

// Stats are a client's counters.
type Stats struct {
	// Completed requests got a 200 with a full body.
	Completed int64
	// Failed requests may have been accepted and did not complete.
	Failed int64
	// Retried counts attempts refused before acceptance and sent again.
	Retried int64
	// Canceled requests ended with their context.
	Canceled int64
	// PerInstance counts completions by instance id.
	PerInstance map[string]int64
}

// Client is safe for concurrent use.
type Client struct {
	dir  string
	opts Options
	http *http.Client
	next atomic.Uint64

	completed, failed, retried, canceled atomic.Int64
	mu                                   sync.Mutex
	perInstance                          map[string]int64
}

// New returns a client of the instances registered in dir.
func New(dir string, opts Options) *Client {
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 20
	}
	if opts.NoInstanceWait <= 0 {
		opts.NoInstanceWait = 5 * time.Second
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 10 * time.Millisecond
	}
	// The transport's DialContext is wrapped to tell dial errors apart.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, &dialError{err: err}
		}
		return c, nil
	}
	return &Client{dir: dir, opts: opts, http: &http.Client{Transport: tr}, perInstance: map[string]int64{}}
}

// dialError marks a connection that was never established.
type dialError struct{ err error }

func (e *dialError) Error() string { return "dial: " + e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// Get sends GET path (e.g. "/work?ms=50") to the registered instances as
// the package documentation describes.
func (c *Client) Get(ctx context.Context, path string) (Response, error) {
	var last error
	for attempt := 0; attempt < c.opts.MaxAttempts; attempt++ {
		inst, err := c.pick(ctx)
		if err != nil {
			return Response{}, c.finish(err)
		}
		resp, retry, err := c.try(ctx, inst, path)
		if err == nil {
			c.completed.Add(1)
			c.mu.Lock()
			c.perInstance[inst.ID]++
			c.mu.Unlock()
			return resp, nil
		}
		if !retry || ctx.Err() != nil {
			return Response{}, c.finish(err)
		}
		c.retried.Add(1)
		last = err
	}
	return Response{}, c.finish(fmt.Errorf("%w after %d attempts: %w", ErrAttempts, c.opts.MaxAttempts, last))
}

// finish counts a request that did not complete.
func (c *Client) finish(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		c.canceled.Add(1)
	} else {
		c.failed.Add(1)
	}
	return err
}

// pick re-reads the registry and returns the next instance round robin,
// polling an empty registry for up to NoInstanceWait.
func (c *Client) pick(ctx context.Context) (registry.Instance, error) {
	deadline := time.Now().Add(c.opts.NoInstanceWait)
	for {
		insts, err := registry.List(c.dir)
		if err != nil {
			return registry.Instance{}, err
		}
		if len(insts) > 0 {
			return insts[(c.next.Add(1)-1)%uint64(len(insts))], nil
		}
		if !time.Now().Before(deadline) {
			return registry.Instance{}, fmt.Errorf("%w in %s", ErrNoInstances, c.dir)
		}
		t := time.NewTimer(c.opts.PollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return registry.Instance{}, ctx.Err()
		case <-t.C:
		}
	}
}

// try sends one attempt; retry says the instance never accepted it.
func (c *Client) try(ctx context.Context, inst registry.Instance, path string) (Response, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+inst.Addr+path, nil)
	if err != nil {
		return Response{}, false, fmt.Errorf("%w: %w", ErrFailed, err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return Response{}, false, ctx.Err()
		}
		var de *dialError
		if errors.As(err, &de) {
			return Response{}, true, fmt.Errorf("instance %s never accepted the request: %w", inst.ID, err)
		}
		addr, ok, lerr := registry.Lookup(c.dir, inst.ID)
		if lerr == nil && (!ok || addr != inst.Addr) {
			return Response{}, true, fmt.Errorf("instance %s unregistered without accepting the request: %w", inst.ID, err)
		}
		return Response{}, false, fmt.Errorf("%w: instance %s: %w", ErrFailed, inst.ID, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, false, fmt.Errorf("%w: instance %s: reading the body: %w", ErrFailed, inst.ID, err)
	}
	if resp.StatusCode != http.StatusOK {
		return Response{}, false, fmt.Errorf("%w: instance %s: %s: %s", ErrFailed, inst.ID, resp.Status, strings.TrimSpace(string(body)))
	}
	return Response{Instance: inst.ID, Body: body}, false, nil
}

// Stats returns the counters so far.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	per := make(map[string]int64, len(c.perInstance))
	for k, v := range c.perInstance {
		per[k] = v
	}
	c.mu.Unlock()
	return Stats{Completed: c.completed.Load(), Failed: c.failed.Load(), Retried: c.retried.Load(), Canceled: c.canceled.Load(), PerInstance: per}
}
