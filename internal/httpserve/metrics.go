package httpserve

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MaxScrapesInFlight bounds the /metrics requests answered at once; more
// are answered 503 at once (a scrape may ask actors for their counts:
// they should not queue up).
const MaxScrapesInFlight = 4

// Metrics is a /metrics handler of the Go runtime's and the process's
// metrics and those of extra, in a registry of its own.
func Metrics(extra ...prometheus.Collector) (http.Handler, error) {
	reg := prometheus.NewRegistry()
	for _, c := range append([]prometheus.Collector{
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	}, extra...) {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{MaxRequestsInFlight: MaxScrapesInFlight}), nil
}
