package server

import (
	"encoding/json"
	"net/http"
)

// Health is what /healthz answers: the server may schedule (status 200)
// when it is the leader and its storage takes writes; otherwise 503, with
// the same document saying which is not so.
type Health struct {
	// Name is the server's name in the leader lease; Role "leader" once it
	// took the lease (Start returned), "standby" while it waits for it;
	// Epoch its leader epoch (0 while standing by).
	Name  string `json:"name"`
	Role  string `json:"role"`
	Epoch uint64 `json:"epoch"`
	// Leading: the lease is held and renewed within its deadline.
	Leading bool `json:"leading"`
	// StorageAvailable: the stores take writes; FailingStores are those
	// whose last write (or probe) failed.
	StorageAvailable bool     `json:"storage_available"`
	FailingStores    []string `json:"failing_stores,omitempty"`
}

// The roles of Health.
const (
	roleLeader  = "leader"
	roleStandby = "standby"
)

// Health reports the server's health (see /healthz).
func (s *Server) Health() Health {
	return Health{
		Name: s.cfg.Leader.Name, Role: roleLeader, Epoch: s.epoch, Leading: s.lease.Valid(),
		StorageAvailable: s.storage.Available(), FailingStores: s.storage.failingStores(),
	}
}

// healthHandler serves Health as JSON, 200 when the server may schedule
// and 503 when not.
func healthHandler(health func() Health) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := health()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !h.Leading || !h.StorageAvailable {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(h)
	})
}
