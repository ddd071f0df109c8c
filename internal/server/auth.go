package server

import (
	"errors"
	"fmt"
	"slices"

	"github.com/sharetree/sharetree/internal/natsauth"
)

// ErrAuthReload is wrapped by every error of ReloadAuth; the users in
// force then stay as they were.
var ErrAuthReload = errors.New("server: auth file not reloaded")

// AuthChange is what a reload of the auth file changed: each user as
// "admin NAME", "client NAME" or "agent NODE" with its key, sorted.
type AuthChange struct {
	Added, Removed []string
}

// ReloadAuth makes f the embedded NATS server's users while the scheduler
// runs, as Config.Auth is at start: the way to revoke a key (a node
// retired or compromised, a client gone) or add one without a restart.
// Connections of a removed user are closed at once and cannot connect
// again; an agent whose node is no longer listed is then unheard, and its
// node goes offline and lost on the usual timeouts. Users that stay keep
// their connections. Only a server embedding NATS and started with an
// auth file can reload one (with NATSURL, the NATS operator manages the
// users).
func (s *Server) ReloadAuth(f *natsauth.File) (AuthChange, error) {
	s.auth.Lock()
	defer s.auth.Unlock()
	switch {
	case f == nil:
		return AuthChange{}, fmt.Errorf("%w: no auth file given", ErrAuthReload)
	case s.embedded == nil:
		return AuthChange{}, fmt.Errorf("%w: the scheduler joined a NATS server (--nats-url): its operator manages the users", ErrAuthReload)
	case s.cfg.Auth == nil:
		return AuthChange{}, fmt.Errorf("%w: the embedded NATS server was started without an auth file (open to anyone); restart it with one", ErrAuthReload)
	}
	if err := s.embedded.SetUsers(natsauth.Users(f, s.schedulerKey)); err != nil {
		return AuthChange{}, fmt.Errorf("%w: %w", ErrAuthReload, err)
	}
	was, now := authUsers(s.cfg.Auth), authUsers(f)
	var c AuthChange
	for _, u := range now {
		if _, found := slices.BinarySearch(was, u); !found {
			c.Added = append(c.Added, u)
		}
	}
	for _, u := range was {
		if _, found := slices.BinarySearch(now, u); !found {
			c.Removed = append(c.Removed, u)
		}
	}
	s.cfg.Auth = f
	s.cfg.Logger.Info("auth file reloaded", "admins", len(f.Admins), "clients", len(f.Clients), "agents", len(f.Agents),
		"added", c.Added, "removed", c.Removed)
	return c, nil
}

// authUsers lists f's users as AuthChange names them, sorted.
func authUsers(f *natsauth.File) []string {
	var us []string
	for _, a := range f.Admins {
		us = append(us, "admin "+a.Name+" "+a.NKey)
	}
	for _, c := range f.Clients {
		us = append(us, "client "+c.Name+" "+c.NKey)
	}
	for _, a := range f.Agents {
		us = append(us, "agent "+a.Node+" "+a.NKey)
	}
	slices.Sort(us)
	return us
}
