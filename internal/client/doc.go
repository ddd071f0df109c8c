// Package client is the Go client of the scheduler's request/reply API:
// submit, get, list and abort operations over NATS. Refusals come back as
// *APIError carrying the typed error the scheduler sent.
package client
