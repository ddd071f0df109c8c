package subjects

import (
	"fmt"
	"strings"
)

// Prefix starts every sharetree subject; the version is part of it so a v2
// can run beside v1.
const Prefix = "sharetree.v1"

// Names of the JetStream streams and key-value buckets.
const (
	// EventsStream keeps every event published under Events.
	EventsStream = "SHARETREE_EVENTS"
	// CompletionsStream is the completions journal: completed jobs stored
	// before their finish is acknowledged to their node (one subject,
	// Completions).
	CompletionsStream = "SHARETREE_COMPLETIONS"
	// DashboardStream keeps the dashboard's samples of each tree
	// (DashboardSamples) for as long as its charts go back, so that a new
	// leader's charts start where its predecessor's were.
	DashboardStream = "SHARETREE_DASHBOARD"
	// OperationsBucket holds one key per operation (its spec and state).
	OperationsBucket = "sharetree-operations"
	// SchedulerBucket holds the leader epoch and other scheduler-wide keys.
	SchedulerBucket = "sharetree-scheduler"
	// ConfigBucket holds the live pool-tree configuration: the cluster
	// attributes, one key per tree and one per pool (see ConfigKey).
	ConfigBucket = "sharetree-config"
	// LeaderBucket holds the leader lease (LeaseKey), written with a
	// per-key TTL (see internal/leader).
	LeaderBucket = "sharetree-leader"
)

// Keys of the buckets that are not built from names.
const (
	// LeaseKey is the leader lease's key in LeaderBucket; its value is the
	// name of the server that holds it.
	LeaseKey = "lease"
	// EpochKey is the leader epoch's key in SchedulerBucket. A new leader
	// raises it before it reads or writes anything else; the revision of
	// that write fences the leader's writes to SchedulerBucket.
	EpochKey = "epoch"
	// FenceKey is the key in OperationsBucket that a new leader writes once
	// (the epoch as its value); the revision of that write fences the
	// leader's writes to OperationsBucket. It is not an operation's key
	// (those start with "op.").
	FenceKey = "fence"
	// ProbeKey is the key the scheduler writes in OperationsBucket and
	// SchedulerBucket to learn whether they take writes again after a
	// failed one (its value: the epoch and the time).
	ProbeKey = "probe"
)

// KVStream is the name of the stream behind a key-value bucket
// (JetStream's layout: "KV_<bucket>").
func KVStream(bucket string) string { return "KV_" + bucket }

// KVKey is the subject under which a key-value bucket's stream stores a
// key (JetStream's layout: "$KV.<bucket>.<key>"), for writes made with
// publish options that the key-value API does not offer (a per-key TTL on
// an update, a condition on another key, see internal/leader and the
// fenced writes of internal/server). bucket and key are one of this
// package's constants or a key it builds, so they are not checked here.
func KVKey(bucket, key string) string { return "$KV." + bucket + "." + key }

// Service names for nats.go/micro (`nats micro ls` shows them).
const (
	// SchedulerService serves heartbeats and the operation API.
	SchedulerService = "sharetree-scheduler"
	// ConfigService serves the pool-tree configuration API.
	ConfigService = "sharetree-config"
)

// NodeHeartbeat is the subject an agent sends its heartbeat requests to.
func NodeHeartbeat(node string) (string, error) {
	if err := ValidateToken("node id", node); err != nil {
		return "", err
	}
	return join(Prefix, "node", node, "heartbeat"), nil
}

// NodeSignal is the subject the scheduler publishes job signals for a node on.
func NodeSignal(node string) (string, error) {
	if err := ValidateToken("node id", node); err != nil {
		return "", err
	}
	return join(Prefix, "node", node, "signal"), nil
}

// NodeHeartbeatAll matches every node's heartbeat subject (for the
// scheduler's service endpoint).
func NodeHeartbeatAll() string { return join(Prefix, "node", "*", "heartbeat") }

// ParseNodeHeartbeat returns the node id of a heartbeat subject.
func ParseNodeHeartbeat(subject string) (string, error) {
	t := strings.Split(subject, ".")
	if len(t) != 5 || join(t[0], t[1]) != Prefix || t[2] != "node" || t[4] != "heartbeat" {
		return "", fmt.Errorf("%w: %q is not %s.node.<node>.heartbeat", ErrInvalidSubject, subject, Prefix)
	}
	if err := ValidateToken("node id", t[3]); err != nil {
		return "", fmt.Errorf("%w: in %q: %w", ErrInvalidSubject, subject, err)
	}
	return t[3], nil
}

// OpSubmit is the subject of operation submissions.
func OpSubmit() string { return join(Prefix, "op", "submit") }

// UserSubmit is the subject on which user submits operations: the
// scheduler takes the user from the subject, and a secured NATS server
// lets each client publish only on its own (see internal/natsauth), so the
// identity comes from NATS, not from the payload.
func UserSubmit(user string) (string, error) {
	if err := ValidateToken("user name", user); err != nil {
		return "", err
	}
	return join(Prefix, "user", user, "op", "submit"), nil
}

// UserSubmitAll matches every user's submission subject.
func UserSubmitAll() string { return join(Prefix, "user", "*", "op", "submit") }

// ParseUserSubmit returns the user of a UserSubmit subject.
func ParseUserSubmit(subject string) (string, error) {
	t := strings.Split(subject, ".")
	if len(t) != 6 || join(t[0], t[1]) != Prefix || t[2] != "user" || t[4] != "op" || t[5] != "submit" {
		return "", fmt.Errorf("%w: %q is not %s.user.<user>.op.submit", ErrInvalidSubject, subject, Prefix)
	}
	if err := ValidateToken("user name", t[3]); err != nil {
		return "", fmt.Errorf("%w: in %q: %w", ErrInvalidSubject, subject, err)
	}
	return t[3], nil
}

// OpList is the subject of operation listings.
func OpList() string { return join(Prefix, "op", "list") }

// OpVerb is a request about one operation.
type OpVerb string

// The requests about one operation.
const (
	OpGet    OpVerb = "get"
	OpAbort  OpVerb = "abort"
	OpUpdate OpVerb = "update"
)

// OpVerbs lists every OpVerb, in a fixed order.
var OpVerbs = []OpVerb{OpGet, OpAbort, OpUpdate}

func (v OpVerb) valid() bool {
	for _, w := range OpVerbs {
		if v == w {
			return true
		}
	}
	return false
}

// Op is the subject of a request about one operation.
func Op(id string, verb OpVerb) (string, error) {
	if err := ValidateToken("operation id", id); err != nil {
		return "", err
	}
	if !verb.valid() {
		return "", fmt.Errorf("%w: operation verb %q is not one of %v", ErrInvalidToken, verb, OpVerbs)
	}
	return join(Prefix, "op", id, string(verb)), nil
}

// OpAll matches one verb for every operation (for the service endpoint).
func OpAll(verb OpVerb) string { return join(Prefix, "op", "*", string(verb)) }

// ParseOp returns the operation id and verb of an operation subject.
func ParseOp(subject string) (string, OpVerb, error) {
	t := strings.Split(subject, ".")
	if len(t) != 5 || join(t[0], t[1]) != Prefix || t[2] != "op" {
		return "", "", fmt.Errorf("%w: %q is not %s.op.<id>.<verb>", ErrInvalidSubject, subject, Prefix)
	}
	if err := ValidateToken("operation id", t[3]); err != nil {
		return "", "", fmt.Errorf("%w: in %q: %w", ErrInvalidSubject, subject, err)
	}
	v := OpVerb(t[4])
	if !v.valid() {
		return "", "", fmt.Errorf("%w: in %q: verb %q is not one of %v", ErrInvalidSubject, subject, t[4], OpVerbs)
	}
	return t[3], v, nil
}

// EventKind is the last token of an event subject.
type EventKind string

// The kinds of events.
const (
	EventOperation  EventKind = "operation"
	EventJob        EventKind = "job"
	EventFairShare  EventKind = "fairshare"
	EventPreemption EventKind = "preemption"
	EventStarvation EventKind = "starvation"
)

// EventKinds lists every EventKind, in a fixed order.
var EventKinds = []EventKind{EventOperation, EventJob, EventFairShare, EventPreemption, EventStarvation}

func (k EventKind) valid() bool {
	for _, w := range EventKinds {
		if k == w {
			return true
		}
	}
	return false
}

// Events is the subject of one kind of event of one tree.
func Events(tree string, kind EventKind) (string, error) {
	if err := ValidateToken("tree", tree); err != nil {
		return "", err
	}
	if !kind.valid() {
		return "", fmt.Errorf("%w: event kind %q is not one of %v", ErrInvalidToken, kind, EventKinds)
	}
	return join(Prefix, "events", tree, string(kind)), nil
}

// Completions is the subject of the completions journal's batches.
func Completions() string { return join(Prefix, "journal", "completions") }

// CompletionsFence is the completions journal's other subject: a new leader
// publishes its epoch there once, and the sequence of that message fences
// the leader's batches (a batch is stored only while it is the subject's
// last message).
func CompletionsFence() string { return join(Prefix, "journal", "fence") }

// DashboardSamples is the subject of one tree's dashboard samples.
func DashboardSamples(tree string) (string, error) {
	if err := ValidateToken("tree", tree); err != nil {
		return "", err
	}
	return join(Prefix, "dashboard", tree), nil
}

// DashboardSamplesAll matches every tree's dashboard samples (the
// stream's subject).
func DashboardSamplesAll() string { return join(Prefix, "dashboard", "*") }

// EventsAll matches every event of every tree (the stream's subject).
func EventsAll() string { return join(Prefix, "events", ">") }

// EventsFilter matches events of one tree ("" is every tree) and one kind
// ("" is every kind).
func EventsFilter(tree string, kind EventKind) (string, error) {
	tt, kt := "*", "*"
	if tree != "" {
		if err := ValidateToken("tree", tree); err != nil {
			return "", err
		}
		tt = tree
	}
	if kind != "" {
		if !kind.valid() {
			return "", fmt.Errorf("%w: event kind %q is not one of %v", ErrInvalidToken, kind, EventKinds)
		}
		kt = string(kind)
	}
	return join(Prefix, "events", tt, kt), nil
}

// ParseEvents returns the tree and kind of an event subject.
func ParseEvents(subject string) (string, EventKind, error) {
	t := strings.Split(subject, ".")
	if len(t) != 5 || join(t[0], t[1]) != Prefix || t[2] != "events" {
		return "", "", fmt.Errorf("%w: %q is not %s.events.<tree>.<kind>", ErrInvalidSubject, subject, Prefix)
	}
	if err := ValidateToken("tree", t[3]); err != nil {
		return "", "", fmt.Errorf("%w: in %q: %w", ErrInvalidSubject, subject, err)
	}
	k := EventKind(t[4])
	if !k.valid() {
		return "", "", fmt.Errorf("%w: in %q: event kind %q is not one of %v", ErrInvalidSubject, subject, t[4], EventKinds)
	}
	return t[3], k, nil
}

// OperationKeys matches the keys of every operation in OperationsBucket (a
// key-value key filter: the bucket holds FenceKey too).
const OperationKeys = "op.>"

// OperationKey is the key of an operation in OperationsBucket.
func OperationKey(id string) (string, error) {
	if err := ValidateToken("operation id", id); err != nil {
		return "", err
	}
	return "op." + id, nil
}
