package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/sharetree/sharetree/actors"
	"github.com/sharetree/sharetree/internal/chart"
	"github.com/sharetree/sharetree/internal/scenario"
	"github.com/sharetree/sharetree/scheduler"
	"github.com/sharetree/sharetree/subjects"
)

// Errors of a dashboard request, each wrapped with what was not found or
// not valid.
var (
	// ErrUnknownTree: no live tree of that name.
	ErrUnknownTree = errors.New("dashboard: unknown tree")
	// ErrUnknownPool: the tree has no such pool.
	ErrUnknownPool = errors.New("dashboard: unknown pool")
	// ErrBadRequest: a malformed name or query parameter.
	ErrBadRequest = errors.New("dashboard: bad request")
)

func pathEscape(s string) string { return url.PathEscape(s) }

// Handler serves the dashboard's pages and its JSON history (GET only):
//
//	/dashboard/                                           the live trees
//	/dashboard/trees/{tree}                               a tree's pools and waiting operations
//	/dashboard/trees/{tree}/pools/{pool}[?resource=cpu]   a pool's charts and attributes
//	/dashboard/api/trees/{tree}/pools/{pool}/history      a pool's history as JSON
//	/dashboard/style.css                                  the style sheet
//
// An unknown tree or pool is 404, a bad name or resource 400, a tree that
// does not answer in time 503; an HTML page says why, the JSON API
// answers {"error": "..."}.
func (d *Dashboard) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /dashboard/{$}", d.treesPage)
	mux.HandleFunc("GET /dashboard/style.css", func(w http.ResponseWriter, _ *http.Request) {
		css, err := fs.ReadFile(assets, "static/style.css")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "max-age=300")
		_, _ = w.Write(css)
		_, _ = io.WriteString(w, chart.Style)
	})
	mux.HandleFunc("GET /dashboard/trees/{tree}", d.treePage)
	mux.HandleFunc("GET /dashboard/trees/{tree}/pools/{pool}", d.poolPage)
	mux.HandleFunc("GET /dashboard/api/trees/{tree}/pools/{pool}/history", d.historyJSON)
	mux.HandleFunc("/dashboard/", func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusNotFound
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			status = http.StatusMethodNotAllowed
		}
		d.errorPage(w, status, fmt.Errorf("%w: %s %s is not a dashboard page (see /dashboard/)", ErrBadRequest, r.Method, r.URL.Path))
	})
	return mux
}

func (d *Dashboard) page(title string, crumbs ...link) page {
	return page{Title: title, Refresh: int(d.cfg.Refresh / time.Second),
		Crumbs: append([]link{{Text: "sharetree", Href: "/dashboard/"}}, crumbs...)}
}

func (d *Dashboard) treesPage(w http.ResponseWriter, _ *http.Request) {
	p := &treesPage{page: d.page("Pool trees")}
	for _, s := range d.orchid.Trees().Trees {
		row := treeRow{Name: s.Tree, Href: treeHref(s.Tree), Error: s.Error, Pools: s.PoolCount, Running: s.RunningOperationCount,
			Lightweight: s.LightweightRunningOperationCount, Pending: s.PendingOperationCount}
		if at, err := time.Parse(time.RFC3339Nano, s.UpdateTime); err == nil {
			row.UpdateTime = formatTime(at)
		}
		p.Trees = append(p.Trees, row)
	}
	d.render(w, "trees", p)
}

// introspect snapshots a live tree, named in the request's path.
func (d *Dashboard) introspect(r *http.Request, scope actors.Scope) (*actors.TreeIntrospection, error) {
	tree := r.PathValue("tree")
	if err := subjects.ValidateToken("tree", tree); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	if !slices.Contains(d.src.Trees(), tree) {
		return nil, fmt.Errorf("%w: %q (see /dashboard/)", ErrUnknownTree, tree)
	}
	return d.src.Introspect(tree, scope)
}

func (d *Dashboard) treePage(w http.ResponseWriter, r *http.Request) {
	in, err := d.introspect(r, actors.Scope{Pending: d.cfg.MaxPending})
	if err != nil {
		d.errorPage(w, 0, err)
		return
	}
	p := buildTreePage(in, d.cfg.MaxRows)
	in.Release()
	p.page = d.page("Tree "+p.Tree, link{Text: p.Tree, Href: treeHref(p.Tree)})
	p.Reviving = in.Reviving // (not leased)
	d.render(w, "tree", p)
}

// poolRequest reads a pool request's tree, pool and resource and
// snapshots the tree.
func (d *Dashboard) poolRequest(r *http.Request) (*actors.TreeIntrospection, string, scheduler.ResourceType, error) {
	pool := r.PathValue("pool")
	if pool != scheduler.RootID {
		if err := subjects.ValidateToken("pool", pool); err != nil {
			return nil, "", 0, fmt.Errorf("%w: %w", ErrBadRequest, err)
		}
	}
	res := scheduler.CPU
	if q := r.URL.Query().Get("resource"); q != "" {
		var err error
		if res, err = scheduler.ParseResourceType(q); err != nil {
			return nil, "", 0, fmt.Errorf("%w: resource: %w", ErrBadRequest, err)
		}
	}
	in, err := d.introspect(r, actors.Scope{})
	if err != nil {
		return nil, "", 0, err
	}
	if !slices.ContainsFunc(in.Pools, func(p actors.PoolIntrospection) bool { return p.Name == pool }) {
		in.Release()
		return nil, "", 0, fmt.Errorf("%w: tree %s has no pool %q", ErrUnknownPool, in.Tree, pool)
	}
	return in, pool, res, nil
}

func (d *Dashboard) poolPage(w http.ResponseWriter, r *http.Request) {
	in, pool, res, err := d.poolRequest(r)
	if err != nil {
		d.errorPage(w, 0, err)
		return
	}
	series, samples := d.history.Series(in.Tree, pool)
	p := buildPoolPage(in, pool, res, series, samples, d.cfg)
	in.Release()
	p.page = d.page("Pool "+pool+" of "+p.Tree, link{Text: p.Tree, Href: treeHref(p.Tree)}, link{Text: pool, Href: poolHref(p.Tree, pool)})
	p.Reviving = in.Reviving // (not leased)
	d.render(w, "pool", p)
}

// HistoryJSON is the JSON document of a pool's history.
type HistoryJSON struct {
	Tree    string              `json:"tree"`
	Pool    string              `json:"pool"`
	Samples []HistorySampleJSON `json:"samples"`
}

// HistorySampleJSON is one sample of a pool.
type HistorySampleJSON struct {
	Time      string                 `json:"time"`
	Usage     scenario.ResourcesJSON `json:"resource_usage"`
	Demand    scenario.ResourcesJSON `json:"resource_demand"`
	FairShare scenario.ResourcesJSON `json:"fair_share_resources"`
	// Volume is an integral pool's accumulated resource volume.
	Volume           *scenario.ResourcesJSON `json:"accumulated_resource_volume,omitempty"`
	StarvationStatus string                  `json:"starvation_status"`
}

func (d *Dashboard) historyJSON(w http.ResponseWriter, r *http.Request) {
	in, pool, _, err := d.poolRequest(r)
	if err != nil {
		writeJSON(w, statusOf(err), map[string]string{"error": err.Error()})
		return
	}
	in.Release()
	series, _ := d.history.Series(in.Tree, pool)
	doc := HistoryJSON{Tree: in.Tree, Pool: pool, Samples: []HistorySampleJSON{}}
	for _, s := range series {
		h := HistorySampleJSON{Time: s.Time.UTC().Format(time.RFC3339Nano), Usage: scenario.ResourcesJSON(s.Usage),
			Demand: scenario.ResourcesJSON(s.Demand), FairShare: scenario.ResourcesJSON(s.FairShare), StarvationStatus: s.Starvation.String()}
		if s.Integral {
			v := scenario.ResourcesJSON(s.Volume)
			h.Volume = &v
		}
		doc.Samples = append(doc.Samples, h)
	}
	writeJSON(w, http.StatusOK, doc)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"error":"encode"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// statusOf is the HTTP status of a refused request.
func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrUnknownTree), errors.Is(err, ErrUnknownPool):
		return http.StatusNotFound
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, actors.ErrUnavailable):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

type errorView struct {
	page
	Status  int
	Message string
}

// errorPage answers a refused request with a page saying why; status 0
// takes statusOf(err).
func (d *Dashboard) errorPage(w http.ResponseWriter, status int, err error) {
	if status == 0 {
		status = statusOf(err)
	}
	if status >= 500 {
		d.logger.Warn("dashboard request failed", "err", err)
	}
	p := &errorView{page: d.page(http.StatusText(status)), Status: status, Message: err.Error()}
	p.Refresh = 0
	d.renderStatus(w, status, "error", p)
}

func (d *Dashboard) render(w http.ResponseWriter, name string, data any) {
	d.renderStatus(w, http.StatusOK, name, data)
}

// renderStatus executes a page into a buffer first, so that a failure is
// a clean 500 and not half a page.
func (d *Dashboard) renderStatus(w http.ResponseWriter, status int, name string, data any) {
	var b bytes.Buffer
	if err := d.pages.byName[name].Execute(&b, data); err != nil {
		d.logger.Error("dashboard page failed", "page", name, "err", err)
		http.Error(w, "dashboard: page "+name+" failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
