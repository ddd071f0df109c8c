package natsauth

import (
	"github.com/nats-io/nats-server/v2/server"

	"github.com/sharetree/sharetree/subjects"
)

// Users are the NATS users of an embedded server secured by f, with
// scheduler (the scheduler's own nkey public key) among them: the
// scheduler and the admins without limits, the clients and the agents
// with their roles' permissions (see the package comment).
func Users(f *File, scheduler string) []*server.NkeyUser {
	users := []*server.NkeyUser{{Nkey: scheduler}}
	for _, a := range f.Admins {
		users = append(users, &server.NkeyUser{Nkey: a.NKey})
	}
	for _, c := range f.Clients {
		inbox, err1 := subjects.ClientInbox(c.NKey)
		submit, err2 := subjects.UserSubmit(c.Name)
		if err1 != nil || err2 != nil {
			continue // (Parse checked the key and the name)
		}
		// A client submits, aborts and updates as itself only: on its own
		// user's subjects, never on the anonymous ones, whose spec could
		// name anyone and which reach every operation.
		allow := append(subjects.ClientRequests(), submit)
		deny := []string{subjects.OpSubmit()}
		for _, v := range subjects.UserOpVerbs {
			allow = append(allow, subjects.UserOpsOf(c.Name, v))
			deny = append(deny, subjects.OpAll(v))
		}
		users = append(users, &server.NkeyUser{Nkey: c.NKey, Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: allow, Deny: deny},
			Subscribe: &server.SubjectPermission{Allow: []string{inbox + ".>"}},
		}})
	}
	for _, a := range f.Agents {
		hb, err1 := subjects.NodeHeartbeat(a.Node)
		sig, err2 := subjects.NodeSignal(a.Node)
		inbox, err3 := subjects.AgentInbox(a.Node)
		if err1 != nil || err2 != nil || err3 != nil {
			continue // (Parse checked the node id)
		}
		users = append(users, &server.NkeyUser{Nkey: a.NKey, Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: []string{hb}},
			Subscribe: &server.SubjectPermission{Allow: []string{sig, inbox + ".>"}},
		}})
	}
	return users
}
