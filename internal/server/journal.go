package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/actors"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// jsJournal keeps the completions journal (actors.CompletionJournal), of
// completed and failed jobs, in the SHARETREE_COMPLETIONS stream. Unlike
// the events stream it is written in the default persist mode: with
// Config.SyncAlways each batch is fsynced before it is acknowledged, since
// a job's finish is acknowledged to its node only after.
type jsJournal struct {
	js     jetstream.JetStream
	stream jetstream.Stream
	logger *slog.Logger
	// fence conditions the batches on this leader still being the newest
	// (its subject, subjects.CompletionsFence, is the stream's other one;
	// nil: unconditioned, for tests of the journal alone).
	fence *fence
	// health learns each batch write's outcome (nil: nothing does).
	health *storageHealth
}

// openJournal creates the completions journal's stream or updates its
// limits.
// maxBytes bounds it (Config.JournalMaxBytes): the scheduler drops its
// batches as the operations store their completed jobs, so it holds what
// completed in the last minutes; when full, new completions wait
// (unacknowledged, so the nodes report them again) instead of old ones
// being lost.
func openJournal(ctx context.Context, js jetstream.JetStream, replicas int, maxBytes int64, logger *slog.Logger) (*jsJournal, error) {
	s, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: subjects.CompletionsStream, Subjects: []string{subjects.Completions(), subjects.CompletionsFence()},
		Description: "sharetree: completed jobs stored before their finish is acknowledged to the node",
		Retention:   jetstream.LimitsPolicy, Discard: jetstream.DiscardNew, MaxBytes: maxBytes,
		Storage: jetstream.FileStorage, Replicas: max(replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("completions journal: %w", err)
	}
	return &jsJournal{js: js, stream: s, logger: logger}, nil
}

// Append implements actors.CompletionJournal.
func (j *jsJournal) Append(ctx context.Context, completed, failed []string) (uint64, error) {
	data, err := proto.Marshal(&pb.CompletionBatch{JobIds: completed, FailedJobIds: failed})
	if err != nil {
		return 0, err
	}
	msg := &nats.Msg{Subject: subjects.Completions(), Data: data}
	var ack *jetstream.PubAck
	if j.fence != nil {
		ack, err = j.fence.publish(ctx, msg, jetstream.WithExpectStream(subjects.CompletionsStream))
	} else {
		ack, err = j.js.PublishMsg(ctx, msg, jetstream.WithExpectStream(subjects.CompletionsStream))
	}
	j.health.observe(storeJournal, err)
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}

// Trim implements actors.CompletionJournal: the batches before seq go (the
// fence's message stays).
func (j *jsJournal) Trim(ctx context.Context, seq uint64) error {
	return j.stream.Purge(ctx, jetstream.WithPurgeSubject(subjects.Completions()), jetstream.WithPurgeSequence(seq))
}

// Load implements actors.CompletionJournal: every batch, in order. A batch
// that does not decode is skipped with a warning that names it.
func (j *jsJournal) Load(ctx context.Context) ([]actors.JournalBatch, error) {
	info, err := j.stream.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("completions journal: %w", err)
	}
	st := info.State
	if st.Msgs == 0 {
		return nil, nil
	}
	out := make([]actors.JournalBatch, 0, st.Msgs)
	for seq := st.FirstSeq; seq <= st.LastSeq; seq++ {
		m, err := j.stream.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("completions journal: batch %d: %w", seq, err)
		}
		if m.Subject != subjects.Completions() {
			continue // the fence
		}
		var b pb.CompletionBatch
		if err := proto.Unmarshal(m.Data, &b); err != nil {
			j.logger.Warn("completions journal: a batch does not decode; its completed jobs run again, its failed ones are not counted", "stream", subjects.CompletionsStream, "seq", seq, "err", err)
			continue
		}
		out = append(out, actors.JournalBatch{Seq: seq, JobIDs: b.GetJobIds(), FailedJobIDs: b.GetFailedJobIds()})
	}
	return out, nil
}
