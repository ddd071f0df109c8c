// Package orchid is the scheduler's live introspection (the orchid of the
// seeds): every attribute of the what-if report, per pool and per
// operation, with operation and running-operation counts, pending reasons
// and queue positions, read from the running actors.
//
// One query type (subjects.OrchidPath) is answered over NATS by a micro
// service (NewService, on subjects.OrchidAll) and over HTTP JSON
// (Orchid.Handler, under /orchid/); both serve the same JSON documents,
// whose attribute names are the what-if report's (scenario.ElementReport).
// NewCollector exports the main numbers as Prometheus gauges. A request
// asks the tree actor for a snapshot (actors.System.Introspect) and never
// blocks an actor: the wait, bounded by a timeout, is on the caller's
// goroutine.
package orchid
