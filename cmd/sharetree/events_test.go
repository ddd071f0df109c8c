package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sharetree/sharetree/internal/testutil"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// eventIDs runs `sharetree events` with args and returns the printed
// events' ids.
func eventIDs(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, errOut := runCLI(t, append([]string{"events"}, args...)...)
	if code != 0 {
		t.Fatalf("events %v: exit %d: %s", args, code, errOut)
	}
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var ev struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("events %v: line %q: %v", args, line, err)
		}
		ids = append(ids, ev.ID)
	}
	return ids
}

// A durable reader goes on where its last run stopped: two runs of
// `events --durable` (the first stopped by --limit) print every event of
// the stream once, in order, and a third prints nothing new.
func TestEventsDurableGoesOnWhereItStopped(t *testing.T) {
	url, c := startScheduler(t)
	spec := &pb.OperationSpec{Pool: "narrow", Tasks: []*pb.TaskSpec{{Name: "main", JobCount: 1, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(time.Hour)}}}}
	for range 6 {
		if _, err := c.Submit(context.Background(), spec); err != nil {
			t.Fatal(err)
		}
	}
	// The operation events (one per submission at least) are in the stream.
	var all []string
	testutil.WaitFor(t, 10*time.Second, "six operation events", func() bool {
		all = eventIDs(t, "--nats-url", url, "--kind", "operation")
		return len(all) >= 6
	})
	first := eventIDs(t, "--nats-url", url, "--kind", "operation", "--durable", "reader", "--limit", "4")
	if len(first) != 4 {
		t.Fatalf("first run printed %d events, want 4 (--limit)", len(first))
	}
	rest := eventIDs(t, "--nats-url", url, "--kind", "operation", "--durable", "reader")
	if diff := cmp.Diff(all, append(first, rest...)[:len(all)]); diff != "" {
		t.Errorf("the two runs' events against the stream's (-stream +runs):\n%s", diff)
	}
	if n := len(first) + len(rest); n < len(all) {
		t.Errorf("the two runs printed %d events, the stream holds %d", n, len(all))
	}
	seen := map[string]bool{}
	for _, id := range append(first, rest...) {
		if seen[id] {
			t.Errorf("event %s printed twice", id)
		}
		seen[id] = true
	}
	again := eventIDs(t, "--nats-url", url, "--kind", "operation", "--durable", "reader")
	for _, id := range again {
		if seen[id] {
			t.Errorf("a third run printed %s again", id)
		}
	}
	for _, args := range [][]string{{"--durable", "a.b"}, {"--limit", "-1"}} {
		if code, _, errOut := runCLI(t, append([]string{"events", "--nats-url", url}, args...)...); code != 2 || !strings.HasPrefix(errOut, "sharetree: "+args[0]) {
			t.Errorf("events %v: exit %d, stderr %q; want 2 naming the flag", args, code, errOut)
		}
	}
}

// Reliability test 17: a durable reader killed with SIGKILL in the middle of
// the stream resumes, in its next run, after the last event it
// acknowledged. The two runs together print every event of the stream in
// stream order, with no gap; the only repeats are the last events the
// killed run printed before it could acknowledge them — at most
// MaxAckPending (each is acknowledged once printed, so at most one here),
// delivered again after the consumer's ack wait — and their ids tell them.
// (The next run once failed with "nats: timeout" when the kill fell
// between a print and its acknowledgement: it took jetstream's empty fetch
// for an error; see TestNoEventYet.)
func TestEventsDurableReaderKilledMidStreamResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills a reader process")
	}
	url, c := startScheduler(t)
	spec := &pb.OperationSpec{Pool: "narrow", Tasks: []*pb.TaskSpec{{Name: "main", JobCount: 1, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(time.Hour)}}}}
	const ops = 45 // the pool takes 50
	for range ops {
		if _, err := c.Submit(context.Background(), spec); err != nil {
			t.Fatal(err)
		}
	}
	var all []string
	testutil.WaitFor(t, 10*time.Second, "an operation event per submission", func() bool {
		all = eventIDs(t, "--nats-url", url, "--kind", "operation")
		return len(all) >= ops
	})

	argv, err := json.Marshal([]string{"events", "--nats-url", url, "--kind", "operation", "--durable", "killed", "--follow"})
	if err != nil {
		t.Fatal(err)
	}
	reader := exec.Command(os.Args[0], "-test.run", "^$")
	reader.Env = append(os.Environ(), childArgsEnv+"="+string(argv))
	stdout, err := reader.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := reader.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	readID := func() (string, error) {
		line, err := out.ReadString('\n')
		if err != nil {
			return "", err // a line cut by the kill is no event printed
		}
		var ev struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		return ev.ID, nil
	}
	var first []string
	for len(first) < ops/3 {
		id, err := readID()
		if err != nil {
			t.Fatalf("the reader stopped after %d events: %v", len(first), err)
		}
		first = append(first, id)
	}
	if err := reader.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// What it printed before the kill is in the pipe.
	for {
		id, err := readID()
		if err != nil {
			break
		}
		first = append(first, id)
	}
	_ = reader.Wait()

	rest := eventIDs(t, "--nats-url", url, "--kind", "operation", "--durable", "killed")
	if len(rest) == 0 {
		t.Fatalf("the run after the kill printed nothing; the killed one printed %d of %d", len(first), len(all))
	}
	// first is the stream's start; rest goes on from at most MaxAckPending
	// events before first's end, and reaches the stream's end.
	if len(first) > len(all) || !slices.Equal(first, all[:len(first)]) {
		t.Fatalf("the killed run printed %v, not the stream's first events %v", first, all[:min(len(first), len(all))])
	}
	k := slices.Index(all, rest[0])
	if k < 0 || k > len(first) {
		t.Fatalf("the run after the kill began with %s (stream index %d): want an event at or before index %d, where the killed run stopped (no gap)", rest[0], k, len(first))
	}
	if n := len(all) - k; len(rest) < n || !slices.Equal(rest[:n], all[k:]) {
		t.Fatalf("the run after the kill printed %v, want the stream's events from index %d: %v", rest, k, all[k:])
	}
	repeats := len(first) - k
	if repeats > durableMaxAckPending {
		t.Errorf("%d events printed again, want at most MaxAckPending (%d)", repeats, durableMaxAckPending)
	}
	t.Logf("stream %d events; the killed run printed %d, the next %d, from index %d: %d printed again", len(all), len(first), len(rest), k, repeats)
}

// An empty fetch is no event yet, whichever way jetstream says it (a
// killed durable reader's unacknowledged event is only delivered again
// after the ack wait, and a --follow reader waits for new events); any
// other error ends the reader.
func TestNoEventYet(t *testing.T) {
	for err, want := range map[error]bool{
		nats.ErrTimeout: true, jetstream.ErrNoMessages: true, context.DeadlineExceeded: true,
		fmt.Errorf("fetch: %w", nats.ErrTimeout): true,
		nats.ErrConnectionClosed:                 false, jetstream.ErrConsumerNotFound: false, errors.New("boom"): false,
	} {
		if got := noEventYet(err); got != want {
			t.Errorf("noEventYet(%v) = %v, want %v", err, got, want)
		}
	}
}

// A --follow reader waits through empty fetches (each --timeout long) for
// new events, and prints one that comes after several of them.
func TestEventsFollowWaitsPastEmptyFetches(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a reader process")
	}
	url, c := startScheduler(t)
	argv, err := json.Marshal([]string{"events", "--nats-url", url, "--kind", "operation", "--follow", "--timeout", "100ms"})
	if err != nil {
		t.Fatal(err)
	}
	reader := exec.Command(os.Args[0], "-test.run", "^$")
	reader.Env = append(os.Environ(), childArgsEnv+"="+string(argv))
	var stderr strings.Builder
	reader.Stderr = &stderr
	stdout, err := reader.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := reader.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- reader.Wait() }()
	t.Cleanup(func() { _ = reader.Process.Kill() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()

	// No operation event yet: the reader's fetches come back empty, ten
	// of them at least (its consumer has been there for ten timeouts).
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var since time.Time
	testutil.WaitFor(t, 30*time.Second, "the reader's consumer, ten fetch timeouts old", func() bool {
		if since.IsZero() {
			stream, err := js.Stream(context.Background(), subjects.EventsStream)
			if err != nil {
				return false
			}
			for range stream.ConsumerNames(context.Background()).Name() {
				since = time.Now()
			}
			return false
		}
		return time.Since(since) >= time.Second
	})
	select {
	case err := <-exited:
		t.Fatalf("the reader exited with no event to read: %v: %s", err, stderr.String())
	default:
	}
	id, err := c.Submit(context.Background(), &pb.OperationSpec{Pool: "narrow", Tasks: []*pb.TaskSpec{{Name: "main", JobCount: 1, JobResources: &pb.Resources{Cpu: 1, UserSlots: 1},
		Run: &pb.TaskSpec_SimulatedDuration{SimulatedDuration: durationpb.New(time.Hour)}}}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case line, ok := <-lines:
		if !ok || !strings.Contains(line, id) {
			t.Fatalf("the reader printed %q (open %v), want an event of operation %s; stderr: %s", line, ok, id, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no event printed 30 s after the submission; stderr: %s", stderr.String())
	}
}
