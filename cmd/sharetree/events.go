package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// durableMaxAckPending bounds the events a durable consumer has delivered
// and not yet had acknowledged: at most this many are printed again after
// a run is killed.
const durableMaxAckPending = 256

// durableAckWait is how long a durable consumer waits for an event's
// acknowledgement before delivering it again: a reader acknowledges each
// event as soon as it printed it, so this is how long the next run waits
// for an event a killed run printed (or was sent) and never acknowledged.
const durableAckWait = 2 * time.Second

// noEventYet reports whether err from a consumer's Next only means that no
// event came within the wait (jetstream returns nats.ErrTimeout for an
// empty fetch): the reader asks again.
func noEventYet(err error) bool {
	return errors.Is(err, jetstream.ErrNoMessages) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded)
}

func newEventsCmd() *cobra.Command {
	var cf clientFlags
	var follow bool
	var tree, kind, durable string
	var limit int
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Print the scheduler's events as JSON lines (from the events stream)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			filter, err := subjects.EventsFilter(tree, subjects.EventKind(kind))
			if err != nil {
				return usageError{err}
			}
			if durable != "" {
				if err := subjects.ValidateToken("consumer name", durable); err != nil {
					return usageError{fmt.Errorf("--durable: %w", err)}
				}
			}
			if limit < 0 {
				return usageError{fmt.Errorf("--limit %d: want 0 (no limit) or more", limit)}
			}
			cf.output = "json"
			nc, _, err := cf.connect()
			if err != nil {
				return err
			}
			defer nc.Close()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			js, err := jetstream.New(nc)
			if err != nil {
				return err
			}
			var cons jetstream.Consumer
			if durable == "" {
				cons, err = js.OrderedConsumer(ctx, subjects.EventsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
			} else {
				// A durable consumer remembers what was acknowledged: the
				// next run goes on from there.
				cons, err = js.CreateOrUpdateConsumer(ctx, subjects.EventsStream, jetstream.ConsumerConfig{
					Durable: durable, FilterSubjects: []string{filter}, DeliverPolicy: jetstream.DeliverAllPolicy,
					AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: durableMaxAckPending, AckWait: durableAckWait,
				})
			}
			if err != nil {
				return fmt.Errorf("events stream %s: %w", subjects.EventsStream, err)
			}
			printed := 0
			for {
				if limit > 0 && printed == limit {
					return nil
				}
				if !follow {
					info, err := cons.Info(ctx)
					if err != nil {
						return err
					}
					if info.NumPending == 0 && info.NumAckPending == 0 {
						return nil
					}
				}
				msg, err := cons.Next(jetstream.FetchMaxWait(cf.timeout))
				if errors.Is(err, context.Canceled) || ctx.Err() != nil {
					return nil
				}
				if noEventYet(err) {
					continue
				}
				if err != nil {
					return err
				}
				ev := &pb.Event{}
				if err := proto.Unmarshal(msg.Data(), ev); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "sharetree: skipping undecodable event on %s: %v\n", msg.Subject(), err)
				} else if err := writeProto(cmd.OutOrStdout(), ev); err != nil {
					return err
				} else {
					printed++
				}
				if durable != "" {
					// Acknowledged once printed, and the acknowledgement
					// confirmed: a run killed in between prints the event
					// again (its id tells the duplicate).
					if err := msg.DoubleAck(ctx); err != nil {
						return fmt.Errorf("acknowledge event on %s: %w", msg.Subject(), err)
					}
				}
			}
		},
	}
	cf.add(cmd)
	cmd.Flags().BoolVar(&follow, "follow", false, "keep printing new events until interrupted")
	cmd.Flags().StringVar(&tree, "tree", "", "only this tree")
	cmd.Flags().StringVar(&kind, "kind", "", "only this kind: operation, job, fairshare, preemption or starvation")
	cmd.Flags().StringVar(&durable, "durable", "", "read through the events stream's durable consumer of this name, acknowledging each event once printed: the next run with the name goes on after the last event acknowledged (the consumer stays until deleted with NATS's tools)")
	cmd.Flags().IntVar(&limit, "limit", 0, "stop after printing this many events (0: no limit)")
	return cmd
}
