package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrFenced is wrapped by every write refused because a newer leader has
// taken over since this server became leader.
var ErrFenced = errors.New("server: write refused: a newer leader took over")

// ErrStaleLeader is wrapped by the error of a server that finds, as it
// raises its fences, that a newer leader has raised them already.
var ErrStaleLeader = errors.New("server: a newer leader has taken over")

// fence conditions a leader's writes to one stream on the last message of
// one of its subjects, which the leader wrote when it took over (raise).
// A newer leader raises it again, after which this leader's writes are
// refused: the stream's last message on the subject is no longer seq.
type fence struct {
	js      jetstream.JetStream
	subject string
	seq     uint64
	// refused counts the writes refused (shared by the server's fences;
	// nil: not counted).
	refused *atomic.Uint64
}

// publish writes msg if the fence is still this leader's.
func (f *fence) publish(ctx context.Context, msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	ack, err := f.js.PublishMsg(ctx, msg, append(opts, jetstream.WithExpectLastSequenceForSubject(f.seq, f.subject))...)
	if err != nil {
		if casConflict(err) {
			if f.refused != nil {
				f.refused.Add(1)
			}
			return nil, fmt.Errorf("%w (fence %s moved past %d): %w", ErrFenced, f.subject, f.seq, err)
		}
		return nil, err
	}
	return ack, nil
}

// put writes a key of a bucket through the fence.
func (f *fence) put(ctx context.Context, bucketSubject string, data []byte) error {
	_, err := f.publish(ctx, &nats.Msg{Subject: bucketSubject, Data: data})
	return err
}

// kvOperation and kvDelete are the header, and its value, with which a
// JetStream key-value bucket marks a key deleted (the key-value API's
// Delete writes the same message).
const (
	kvOperation = "KV-Operation"
	kvDelete    = "DEL"
)

// delete marks a key of a bucket deleted through the fence.
func (f *fence) delete(ctx context.Context, bucketSubject string) error {
	msg := &nats.Msg{Subject: bucketSubject, Header: nats.Header{}}
	msg.Header.Set(kvOperation, kvDelete)
	_, err := f.publish(ctx, msg)
	return err
}

// raiseFence writes epoch as the last message of subject in stream, with
// compare-and-set, unless that message holds this epoch or a newer one
// (ErrStaleLeader: a newer leader has raised it), and returns the fence
// (counting refused writes in refused). The earlier leaders' messages on
// subject are purged.
func raiseFence(ctx context.Context, js jetstream.JetStream, stream jetstream.Stream, subject string, epoch uint64, refused *atomic.Uint64) (*fence, error) {
	for range 10 {
		var last uint64
		m, err := stream.GetLastMsgForSubject(ctx, subject)
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
		case err != nil:
			return nil, fmt.Errorf("fence %s: %w", subject, err)
		default:
			last = m.Sequence
			if len(m.Data) > 0 { // (a deleted key's marker holds nothing)
				held, err := strconv.ParseUint(string(m.Data), 10, 64)
				if err != nil {
					return nil, fmt.Errorf("fence %s: stored epoch %q: %w", subject, m.Data, err)
				}
				if held >= epoch {
					return nil, fmt.Errorf("%w: fence %s holds epoch %d, this server's is %d", ErrStaleLeader, subject, held, epoch)
				}
			}
		}
		ack, err := js.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: []byte(strconv.FormatUint(epoch, 10))},
			jetstream.WithExpectLastSequencePerSubject(last))
		if err == nil {
			if err := stream.Purge(ctx, jetstream.WithPurgeSubject(subject), jetstream.WithPurgeSequence(ack.Sequence)); err != nil {
				return nil, fmt.Errorf("fence %s: purge the earlier epochs: %w", subject, err)
			}
			return &fence{js: js, subject: subject, seq: ack.Sequence, refused: refused}, nil
		}
		if !casConflict(err) {
			return nil, fmt.Errorf("fence %s: raise to epoch %d: %w", subject, epoch, err)
		}
	}
	return nil, fmt.Errorf("fence %s: too many concurrent raises", subject)
}
