package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/dashboard"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// dashboardLoadTimeout bounds a new leader's read of the dashboard
// stream: charts that come late are better than a dashboard that waits.
const dashboardLoadTimeout = 30 * time.Second

// ensureDashboardStream creates the dashboard stream, or updates its
// limits: samples kept for window, at most maxBytes. Like the events
// stream, it is written without a flush per sample (asynchronous persist)
// on one server: a crash of the embedded server may lose the newest
// samples of the charts, nothing else.
func ensureDashboardStream(ctx context.Context, js jetstream.JetStream, window time.Duration, maxBytes int64, replicas int) error {
	cfg := jetstream.StreamConfig{
		Name: subjects.DashboardStream, Subjects: []string{subjects.DashboardSamplesAll()},
		Retention: jetstream.LimitsPolicy, MaxAge: window, MaxBytes: maxBytes, Discard: jetstream.DiscardOld,
		Storage: jetstream.FileStorage, Replicas: max(replicas, 1), PersistMode: jetstream.AsyncPersistMode,
	}
	if cfg.Replicas > 1 {
		cfg.PersistMode = jetstream.DefaultPersistMode // none other for replicated streams
	}
	if s, err := js.Stream(ctx, cfg.Name); err == nil {
		cfg.PersistMode = s.CachedInfo().Config.PersistMode // it cannot change
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("dashboard stream: %w", err)
	}
	if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("dashboard stream: %w", err)
	}
	return nil
}

// dashboardArchive is the dashboard's Archive in the dashboard stream.
type dashboardArchive struct {
	js     jetstream.JetStream
	logger *slog.Logger
	// failed counts the samples not published (their tree's name is no
	// subject token, or the publish was refused at once).
	failed atomic.Uint64
}

var _ dashboard.Archive = (*dashboardArchive)(nil)

// Append publishes s without waiting for its acknowledgement.
func (a *dashboardArchive) Append(s *pb.DashboardSample) {
	subject, err := subjects.DashboardSamples(s.GetTree())
	if err == nil {
		var data []byte
		if data, err = proto.Marshal(s); err == nil {
			_, err = a.js.PublishAsync(subject, data)
		}
	}
	if err != nil {
		if a.failed.Add(1) == 1 {
			a.logger.Warn("dashboard sample not archived (a new leader's charts will miss it)", "tree", s.GetTree(), "err", err)
		}
	}
}

// Load reads the stream from its start (its age limit is the dashboard's
// window) and calls fn with each sample; one that does not decode is
// skipped and counted in the log.
func (a *dashboardArchive) Load(ctx context.Context, fn func(*pb.DashboardSample)) error {
	ctx, cancel := context.WithTimeout(ctx, dashboardLoadTimeout)
	defer cancel()
	cons, err := a.js.OrderedConsumer(ctx, subjects.DashboardStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subjects.DashboardSamplesAll()}, DeliverPolicy: jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return fmt.Errorf("dashboard stream: %w", err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("dashboard stream: %w", err)
	}
	undecodable := 0
	for range info.NumPending {
		msg, err := cons.Next(jetstream.FetchContext(ctx))
		if err != nil {
			return fmt.Errorf("dashboard stream: %w", err)
		}
		s := &pb.DashboardSample{}
		if err := proto.Unmarshal(msg.Data(), s); err != nil {
			if undecodable++; undecodable == 1 {
				a.logger.Warn("undecodable dashboard sample skipped", "subject", msg.Subject(), "err", err)
			}
			continue
		}
		fn(s)
	}
	return nil
}
