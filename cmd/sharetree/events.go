package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

func newEventsCmd() *cobra.Command {
	var cf clientFlags
	var follow bool
	var tree, kind string
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Print the scheduler's events as JSON lines (from the events stream)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			filter, err := subjects.EventsFilter(tree, subjects.EventKind(kind))
			if err != nil {
				return usageError{err}
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
			cons, err := js.OrderedConsumer(ctx, subjects.EventsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
			if err != nil {
				return fmt.Errorf("events stream %s: %w", subjects.EventsStream, err)
			}
			for {
				if !follow {
					info, err := cons.Info(ctx)
					if err != nil {
						return err
					}
					if info.NumPending == 0 {
						return nil
					}
				}
				msg, err := cons.Next(jetstream.FetchMaxWait(cf.timeout))
				if errors.Is(err, context.Canceled) || ctx.Err() != nil {
					return nil
				}
				if errors.Is(err, jetstream.ErrNoMessages) || errors.Is(err, context.DeadlineExceeded) {
					continue
				}
				if err != nil {
					return err
				}
				ev := &pb.Event{}
				if err := proto.Unmarshal(msg.Data(), ev); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "sharetree: skipping undecodable event on %s: %v\n", msg.Subject(), err)
					continue
				}
				if err := writeProto(cmd.OutOrStdout(), ev); err != nil {
					return err
				}
			}
		},
	}
	cf.add(cmd)
	cmd.Flags().BoolVar(&follow, "follow", false, "keep printing new events until interrupted")
	cmd.Flags().StringVar(&tree, "tree", "", "only this tree")
	cmd.Flags().StringVar(&kind, "kind", "", "only this kind: operation, job, fairshare, preemption or starvation")
	return cmd
}
