package natsauth_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sharetree/sharetree/internal/natsauth"
	"github.com/sharetree/sharetree/subjects"
)

func key(t *testing.T) string {
	t.Helper()
	k, err := natsauth.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k.Public()
}

func TestParse(t *testing.T) {
	a, c, n := key(t), key(t), key(t)
	f, err := natsauth.Parse("auth.yaml", []byte(fmt.Sprintf("version: 1\nadmins: [{name: ops, nkey: %s}]\nclients: [{name: ci, nkey: %s}]\nagents: [{node: n1, nkey: %s}]\n", a, c, n)))
	if err != nil {
		t.Fatal(err)
	}
	want := &natsauth.File{
		Admins:  []natsauth.Identity{{Name: "ops", NKey: a}},
		Clients: []natsauth.Identity{{Name: "ci", NKey: c}},
		Agents:  []natsauth.Agent{{Node: "n1", NKey: n}},
	}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseNamesWhatIsWrong(t *testing.T) {
	a, b := key(t), key(t)
	for _, c := range []struct{ name, doc, want string }{
		{"empty", "", "auth.yaml: empty document"},
		{"not yaml", "version: [", "auth.yaml: "},
		{"version", "version: 2\nadmins: [{name: x, nkey: " + a + "}]\n", "auth.yaml: version (line 1): version 2: want 1"},
		{"unknown key", "version: 1\nusers: []\n", "field users not found"},
		{"no users", "version: 1\n", "no users"},
		{"bad key", "version: 1\nclients:\n  - {name: ci, nkey: SUABC}\n", `clients[0].nkey (line 3): "SUABC" is not an nkey user public key`},
		{"no name", "version: 1\nadmins:\n  - {nkey: " + a + "}\n", "admins[0].name (line 3): a name is required"},
		{"client name not a token", "version: 1\nclients:\n  - {name: a.b, nkey: " + a + "}\n", "clients[0].name (line 3): "},
		{"client name twice", "version: 1\nclients:\n  - {name: ci, nkey: " + a + "}\n  - {name: ci, nkey: " + b + "}\n", `clients[1].name (line 4): user "ci" is already clients[0]`},
		{"bad node", "version: 1\nagents:\n  - {node: a.b, nkey: " + a + "}\n", "agents[0].node (line 3): "},
		{"node twice", "version: 1\nagents:\n  - {node: n1, nkey: " + a + "}\n  - {node: n1, nkey: " + b + "}\n", `agents[1].node (line 4): node "n1" has an agent already`},
		{"key twice", "version: 1\nadmins: [{name: x, nkey: " + a + "}]\nagents:\n  - {node: n1, nkey: " + a + "}\n", "agents[0].nkey (line 4): nkey " + a + " is already admins[0].nkey"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := natsauth.Parse("auth.yaml", []byte(c.doc))
			if !errors.Is(err, natsauth.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Parse = %v, want ErrInvalid containing %q", err, c.want)
			}
		})
	}
}

func TestUsersConfineClientsAndAgents(t *testing.T) {
	sched, a, c, n := key(t), key(t), key(t), key(t)
	users := natsauth.Users(&natsauth.File{
		Admins:  []natsauth.Identity{{Name: "ops", NKey: a}},
		Clients: []natsauth.Identity{{Name: "ci", NKey: c}},
		Agents:  []natsauth.Agent{{Node: "n1", NKey: n}},
	}, sched)
	if len(users) != 4 || users[0].Nkey != sched || users[0].Permissions != nil || users[1].Nkey != a || users[1].Permissions != nil {
		t.Fatalf("scheduler and admin users: %+v %+v, want both unrestricted", users[0], users[1])
	}
	inbox, _ := subjects.ClientInbox(c)
	// The client submits, aborts and updates on its own user's subjects
	// only.
	wantPub := append(subjects.ClientRequests(), "sharetree.v1.user.ci.op.submit", "sharetree.v1.user.ci.op.*.abort", "sharetree.v1.user.ci.op.*.update")
	wantDeny := []string{"sharetree.v1.op.submit", "sharetree.v1.op.*.abort", "sharetree.v1.op.*.update"}
	if p := users[2].Permissions; !cmp.Equal(p.Subscribe.Allow, []string{inbox + ".>"}) || !cmp.Equal(p.Publish.Allow, wantPub) ||
		!cmp.Equal(p.Publish.Deny, wantDeny) {
		t.Errorf("client permissions %+v %+v", p.Publish, p.Subscribe)
	}
	want := []string{"sharetree.v1.node.n1.signal", "_INBOX_n1.>"}
	if p := users[3].Permissions; !cmp.Equal(p.Publish.Allow, []string{"sharetree.v1.node.n1.heartbeat"}) || !cmp.Equal(p.Subscribe.Allow, want) {
		t.Errorf("agent permissions %+v %+v", p.Publish, p.Subscribe)
	}
}

func TestReadSeed(t *testing.T) {
	k, err := natsauth.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	seed, err := k.Seed()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.nk")
	if err := os.WriteFile(good, append(seed, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := natsauth.ReadSeed(good)
	if err != nil || got.Public() != k.Public() {
		t.Fatalf("ReadSeed = %v, %v; want the key %s", got, err, k.Public())
	}
	bad := filepath.Join(dir, "bad.nk")
	if err := os.WriteFile(bad, []byte("not a seed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{bad, filepath.Join(dir, "missing.nk")} {
		if _, err := natsauth.ReadSeed(p); !errors.Is(err, natsauth.ErrSeed) {
			t.Errorf("ReadSeed(%s) = %v, want ErrSeed", p, err)
		}
	}
}
