package server

// EventsSettled reports whether every event the server has accepted so far
// is stored in the events stream (or failed and counted): the tests read
// the stream once it is.
func (s *Server) EventsSettled() bool { return s.events.settled() }
