package subjects

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNodeHeartbeatRoundTrip(t *testing.T) {
	for _, node := range []string{"n1", "node-0042", "rack_7-host3", strings.Repeat("a", MaxTokenLength)} {
		s, err := NodeHeartbeat(node)
		if err != nil {
			t.Fatalf("NodeHeartbeat(%q): %v", node, err)
		}
		got, err := ParseNodeHeartbeat(s)
		if err != nil {
			t.Fatalf("ParseNodeHeartbeat(%q): %v", s, err)
		}
		if got != node {
			t.Errorf("round trip of %q gave %q", node, got)
		}
	}
}

func TestOpRoundTrip(t *testing.T) {
	for _, verb := range OpVerbs {
		s, err := Op("op-17", verb)
		if err != nil {
			t.Fatal(err)
		}
		id, v, err := ParseOp(s)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"op-17", string(verb)}, []string{id, string(v)}); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
}

func TestEventsRoundTrip(t *testing.T) {
	for _, kind := range EventKinds {
		s, err := Events("physical", kind)
		if err != nil {
			t.Fatal(err)
		}
		tree, k, err := ParseEvents(s)
		if err != nil {
			t.Fatal(err)
		}
		if tree != "physical" || k != kind {
			t.Errorf("round trip of %s gave %s/%s", s, tree, k)
		}
	}
}

func TestFixedSubjects(t *testing.T) {
	got := []string{OpSubmit(), OpList(), NodeHeartbeatAll(), OpAll(OpGet), EventsAll(), Completions(), CompletionsFence(),
		KVKey(LeaderBucket, LeaseKey), KVKey(OperationsBucket, FenceKey), KVKey(SchedulerBucket, EpochKey), DashboardSamplesAll()}
	want := []string{
		"sharetree.v1.op.submit",
		"sharetree.v1.op.list",
		"sharetree.v1.node.*.heartbeat",
		"sharetree.v1.op.*.get",
		"sharetree.v1.events.>",
		"sharetree.v1.journal.completions",
		"sharetree.v1.journal.fence",
		"$KV.sharetree-leader.lease",
		"$KV.sharetree-operations.fence",
		"$KV.sharetree-scheduler.epoch",
		"sharetree.v1.dashboard.*",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if d, err := DashboardSamples("physical"); err != nil || d != "sharetree.v1.dashboard.physical" {
		t.Errorf("DashboardSamples = %q, %v", d, err)
	}
	if _, err := DashboardSamples("a.b"); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("DashboardSamples(a.b): %v, want ErrInvalidToken", err)
	}
	f, err := EventsFilter("", EventJob)
	if err != nil || f != "sharetree.v1.events.*.job" {
		t.Errorf("EventsFilter = %q, %v", f, err)
	}
}

func TestInvalidTokens(t *testing.T) {
	bad := []string{"", "a.b", "a*", ">", "a b", "tab\t", "$SYS", "ü", strings.Repeat("x", MaxTokenLength+1)}
	for _, tok := range bad {
		if _, err := NodeHeartbeat(tok); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("NodeHeartbeat(%q) error = %v, want ErrInvalidToken", tok, err)
		}
		if _, err := Op(tok, OpGet); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("Op(%q) error = %v, want ErrInvalidToken", tok, err)
		}
		if _, err := Events(tok, EventJob); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("Events(%q) error = %v, want ErrInvalidToken", tok, err)
		}
	}
	if _, err := Op("x", "delete"); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("unknown verb accepted: %v", err)
	}
	if _, err := Events("t", "gossip"); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("unknown event kind accepted: %v", err)
	}
}

func TestParseRejects(t *testing.T) {
	for _, s := range []string{
		"", "sharetree.v1.node.n1", "sharetree.v2.node.n1.heartbeat", "sharetree.v1.node.n1.signal",
		"sharetree.v1.node..heartbeat", "x.sharetree.v1.node.n1.heartbeat", "sharetree.v1.node.n1.heartbeat.x",
	} {
		if _, err := ParseNodeHeartbeat(s); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("ParseNodeHeartbeat(%q) error = %v, want ErrInvalidSubject", s, err)
		}
	}
	for _, s := range []string{"sharetree.v1.op.x.delete", "sharetree.v1.op.submit", "sharetree.v1.op.$x.get"} {
		if _, _, err := ParseOp(s); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("ParseOp(%q) error = %v, want ErrInvalidSubject", s, err)
		}
	}
	for _, s := range []string{"sharetree.v1.events.t.gossip", "sharetree.v1.events.t"} {
		if _, _, err := ParseEvents(s); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("ParseEvents(%q) error = %v, want ErrInvalidSubject", s, err)
		}
	}
}

func TestUserSubmitRoundTrip(t *testing.T) {
	s, err := UserSubmit("alice")
	if err != nil || s != "sharetree.v1.user.alice.op.submit" {
		t.Fatalf("UserSubmit(alice) = %q, %v", s, err)
	}
	if u, err := ParseUserSubmit(s); err != nil || u != "alice" {
		t.Errorf("ParseUserSubmit(%q) = %q, %v", s, u, err)
	}
	if UserSubmitAll() != "sharetree.v1.user.*.op.submit" {
		t.Errorf("UserSubmitAll = %q", UserSubmitAll())
	}
	for _, bad := range []string{"", "a.b", "a*", ">"} {
		if _, err := UserSubmit(bad); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("UserSubmit(%q): %v, want ErrInvalidToken", bad, err)
		}
	}
	for _, bad := range []string{"sharetree.v1.op.submit", "sharetree.v1.user.alice.op.get", "sharetree.v1.user..op.submit", "sharetree.v2.user.a.op.submit"} {
		if _, err := ParseUserSubmit(bad); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("ParseUserSubmit(%q): %v, want ErrInvalidSubject", bad, err)
		}
	}
}

// ParseAnyOp reads both forms of an operation request's subject and
// refuses what neither is.
func TestParseAnyOp(t *testing.T) {
	type parsed struct {
		User, ID string
		Verb     OpVerb
	}
	for subject, want := range map[string]parsed{
		"sharetree.v1.op.op-1.get":               {"", "op-1", OpGet},
		"sharetree.v1.op.op-1.abort":             {"", "op-1", OpAbort},
		"sharetree.v1.user.alice.op.op-1.abort":  {"alice", "op-1", OpAbort},
		"sharetree.v1.user.alice.op.op-1.update": {"alice", "op-1", OpUpdate},
	} {
		u, id, v, err := ParseAnyOp(subject)
		if diff := cmp.Diff(want, parsed{u, id, v}); diff != "" || err != nil {
			t.Errorf("ParseAnyOp(%q): %v (-want +got):\n%s", subject, err, diff)
		}
	}
	for _, bad := range []string{"", "sharetree.v1.op.op-1", "sharetree.v1.user.alice.op.op-1.get", "sharetree.v1.user.alice.op.op-1",
		"sharetree.v1.users.alice.op.op-1.abort", "sharetree.v2.op.op-1.get", "sharetree.v1.op.o*.get"} {
		if _, _, _, err := ParseAnyOp(bad); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("ParseAnyOp(%q): %v, want ErrInvalidSubject", bad, err)
		}
	}
}

func TestUserOpRoundTrip(t *testing.T) {
	for _, verb := range UserOpVerbs {
		s, err := UserOp("alice", "op-1", verb)
		want := "sharetree.v1.user.alice.op.op-1." + string(verb)
		if err != nil || s != want {
			t.Fatalf("UserOp(alice, op-1, %s) = %q, %v; want %q", verb, s, err, want)
		}
		if u, id, v, err := ParseUserOp(s); err != nil || u != "alice" || id != "op-1" || v != verb {
			t.Errorf("ParseUserOp(%q) = %q, %q, %q, %v", s, u, id, v, err)
		}
		if got, want := UserOpAll(verb), "sharetree.v1.user.*.op.*."+string(verb); got != want {
			t.Errorf("UserOpAll(%s) = %q, want %q", verb, got, want)
		}
		if got, want := UserOpsOf("alice", verb), "sharetree.v1.user.alice.op.*."+string(verb); got != want {
			t.Errorf("UserOpsOf(alice, %s) = %q, want %q", verb, got, want)
		}
	}
	for _, c := range []struct{ user, id, verb string }{{"", "op", "abort"}, {"a.b", "op", "abort"}, {"alice", "o*", "abort"}, {"alice", "op", "get"}, {"alice", "op", "submit"}} {
		if _, err := UserOp(c.user, c.id, OpVerb(c.verb)); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("UserOp(%q, %q, %q): %v, want ErrInvalidToken", c.user, c.id, c.verb, err)
		}
	}
	for _, bad := range []string{"sharetree.v1.op.op-1.abort", "sharetree.v1.user.alice.op.op-1.get", "sharetree.v1.user..op.op-1.abort",
		"sharetree.v1.user.alice.op..abort", "sharetree.v2.user.a.op.o.abort", "sharetree.v1.user.alice.op.submit", "sharetree.v1.user.alice.ops.o.abort"} {
		if _, _, _, err := ParseUserOp(bad); !errors.Is(err, ErrInvalidSubject) {
			t.Errorf("ParseUserOp(%q): %v, want ErrInvalidSubject", bad, err)
		}
	}
}
