package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/internal/natsauth"
	"github.com/sharetree/sharetree/internal/pbyaml"
	"github.com/sharetree/sharetree/internal/wire"
	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
	"github.com/sharetree/sharetree/subjects"
)

// clientFlags are shared by the client commands.
type clientFlags struct {
	url     string
	output  string
	timeout time.Duration
	nkey    string
	tlsCA   string
}

func (c *clientFlags) add(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&c.tlsCA, "tls-ca", "", "PEM file of the certificate authority to trust for a NATS server that requires TLS (default: the system's)")
	cmd.PersistentFlags().StringVar(&c.url, "nats-url", nats.DefaultURL, "NATS server of the scheduler")
	cmd.PersistentFlags().StringVar(&c.nkey, "nkey", "", "file holding this client's nkey seed (`sharetree nkey` makes one), for a NATS server that requires it")
	cmd.PersistentFlags().StringVarP(&c.output, "output", "o", "table", "output format: json or table")
	cmd.PersistentFlags().DurationVar(&c.timeout, "timeout", 5*time.Second, "timeout of each request")
}

func (c *clientFlags) connect() (*nats.Conn, *client.Client, error) {
	if c.output != "json" && c.output != "table" {
		return nil, nil, usageError{fmt.Errorf("--output %q: want json or table", c.output)}
	}
	if c.timeout <= 0 {
		return nil, nil, usageError{fmt.Errorf("--timeout %s must be positive", c.timeout)}
	}
	opts, err := cliAuth(c.nkey, c.tlsCA)
	if err != nil {
		return nil, nil, err
	}
	nc, err := nats.Connect(c.url, append(opts, nats.Name("sharetree-cli"))...)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", c.url, err)
	}
	return nc, client.New(nc, c.timeout), nil
}

// cliAuth are the connection options of a client whose nkey seed is in
// the file seed ("": none) and which trusts the certificate authority in
// the file ca ("": the system's).
func cliAuth(seed, ca string) ([]nats.Option, error) {
	opts, err := trustCA(ca)
	if err != nil {
		return nil, err
	}
	if seed == "" {
		return opts, nil
	}
	key, err := natsauth.ReadSeed(seed)
	if err != nil {
		return nil, usageError{fmt.Errorf("--nkey: %w", err)}
	}
	auth, err := natsauth.ClientOptions(key)
	return append(opts, auth...), err
}

// trustCA is the connection option that trusts the certificate authority
// in the file ca (none for ""); a file that cannot be read is a usage
// error naming --tls-ca.
func trustCA(ca string) ([]nats.Option, error) {
	if ca == "" {
		return nil, nil
	}
	if _, err := os.Stat(ca); err != nil {
		return nil, usageError{fmt.Errorf("--tls-ca: %w", err)}
	}
	return []nats.Option{nats.RootCAs(ca)}, nil
}

// with connects, runs f with a client and a context bounded by timeout,
// and closes the connection.
func (c *clientFlags) with(cmd *cobra.Command, timeout time.Duration, f func(context.Context, *client.Client) error) error {
	nc, cl, err := c.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := withTimeout(cmd, timeout)
	defer cancel()
	return f(ctx, cl)
}

var pj = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: false}

func writeProto(w io.Writer, m proto.Message) error {
	b, err := pj.Marshal(m)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// parseSpec reads an operation spec from YAML or JSON with the protobuf
// field names (snake_case, or their camelCase JSON form); durations are Go's
// ("30s", "1h30m"), enum values full ("PREEMPTION_MODE_GRACEFUL") or short
// ("graceful"). Errors name the file, line, column and key (package pbyaml).
func parseSpec(name string, data []byte) (*pb.OperationSpec, error) {
	spec := &pb.OperationSpec{}
	if err := (pbyaml.Options{File: name}).Unmarshal(data, spec); err != nil {
		return nil, usageError{err}
	}
	if proto.Size(spec) == 0 {
		return nil, usageError{fmt.Errorf("%s: empty spec", name)}
	}
	return spec, nil
}

func newOpCmd() *cobra.Command {
	var cf clientFlags
	op := &cobra.Command{Use: "op", Short: "Submit, inspect and abort operations", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }}
	cf.add(op)

	var file, requestID, user string
	submit := &cobra.Command{
		Use: "submit -f SPEC", Short: "Submit an operation; prints its id", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageError{errors.New("op submit: -f SPEC is required")}
			}
			data, err := readFile(file)
			if err != nil {
				return err
			}
			name := file
			if name == "-" {
				name = "stdin"
			}
			spec, err := parseSpec(name, data)
			if err != nil {
				return err
			}
			if requestID == "" {
				requestID = client.NewRequestID()
			} else if err := wire.ValidateRequestID(requestID); err != nil {
				return usageError{fmt.Errorf("--request-id: %w", err)}
			}
			if err := checkUser(user); err != nil {
				return err
			}
			// A submission that gets no answer is sent again with the
			// same request id (see client.Submit): the command waits for
			// every try.
			return cf.with(cmd, client.RetriedDuration(cf.timeout), func(ctx context.Context, c *client.Client) error {
				id, err := asUser(c, user).SubmitRequest(ctx, spec, requestID)
				if err != nil {
					return err
				}
				if cf.output == "json" {
					return writeProto(cmd.OutOrStdout(), &pb.StartOperationResponse{OperationId: id})
				}
				fmt.Fprintln(cmd.OutOrStdout(), id)
				return nil
			})
		},
	}
	submit.Flags().StringVarP(&file, "file", "f", "", "operation spec (YAML or JSON; - for stdin)")
	submit.Flags().StringVar(&user, "user", "", "submit as this user, on the user's own subject: the scheduler takes the user from there (the spec's user is overridden), and a NATS server secured with --auth accepts it only with that client's nkey (a client there must give its name here)")
	submit.Flags().StringVar(&requestID, "request-id", "", "make the submission idempotent: a submission with the request id of one already stored starts nothing and prints that operation's id (letters, digits, -_.:, up to 128; default: a random one, reused by this command's own retries)")

	get := &cobra.Command{
		Use: "get ID", Short: "Show an operation", Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOpID(cmd, args[0]); err != nil {
				return err
			}
			return cf.with(cmd, client.RetriedDuration(cf.timeout), func(ctx context.Context, c *client.Client) error {
				st, err := c.Get(ctx, args[0])
				if err != nil {
					return err
				}
				return writeStatuses(cmd.OutOrStdout(), cf.output, st)
			})
		},
	}
	var states []string
	var pool string
	var limit int32
	list := &cobra.Command{
		Use: "list", Short: "List operations", Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req := &pb.ListOperationsRequest{Pool: pool, Limit: limit}
			for _, s := range states {
				v, ok := pb.OperationState_value["OPERATION_STATE_"+strings.ToUpper(s)]
				if !ok || v == 0 {
					return usageError{fmt.Errorf("--state %q: want pending, running, completed, failed or aborted", s)}
				}
				req.States = append(req.States, pb.OperationState(v))
			}
			if limit < 0 {
				return usageError{fmt.Errorf("--limit %d must be >= 0", limit)}
			}
			return cf.with(cmd, client.RetriedDuration(cf.timeout), func(ctx context.Context, c *client.Client) error {
				ops, err := c.List(ctx, req)
				if err != nil {
					return err
				}
				return writeStatuses(cmd.OutOrStdout(), cf.output, ops...)
			})
		},
	}
	list.Flags().StringSliceVar(&states, "state", nil, "only these states")
	list.Flags().StringVar(&pool, "pool", "", "only this pool")
	list.Flags().Int32Var(&limit, "limit", 0, "at most this many (0: all)")

	var reason, abortUser string
	abort := &cobra.Command{
		Use: "abort ID", Short: "Abort an operation", Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOpID(cmd, args[0]); err != nil {
				return err
			}
			if err := checkUser(abortUser); err != nil {
				return err
			}
			return cf.with(cmd, client.RetriedDuration(cf.timeout), func(ctx context.Context, c *client.Client) error {
				st, err := asUser(c, abortUser).Abort(ctx, args[0], reason)
				if err != nil {
					return err
				}
				return writeStatuses(cmd.OutOrStdout(), cf.output, st)
			})
		},
	}
	abort.Flags().StringVar(&reason, "reason", "", "why (recorded in the operation and its event)")
	userFlag(abort, &abortUser, "abort")

	var waitFor time.Duration
	wait := &cobra.Command{
		Use: "wait ID", Short: "Wait until an operation finishes; exit 1 unless it completed", Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOpID(cmd, args[0]); err != nil {
				return err
			}
			if waitFor <= 0 {
				return usageError{fmt.Errorf("--wait-timeout %s must be positive", waitFor)}
			}
			return cf.with(cmd, waitFor, func(ctx context.Context, c *client.Client) error {
				st, err := c.Wait(ctx, args[0], 200*time.Millisecond)
				if err != nil {
					return err
				}
				if err := writeStatuses(cmd.OutOrStdout(), cf.output, st); err != nil {
					return err
				}
				if st.GetState() != pb.OperationState_OPERATION_STATE_COMPLETED {
					return fmt.Errorf("operation %s %s: %s", st.GetId(), stateWord(st.GetState()), st.GetError().GetMessage())
				}
				return nil
			})
		},
	}
	wait.Flags().DurationVar(&waitFor, "wait-timeout", time.Hour, "give up after this long")
	op.AddCommand(submit, get, list, abort, wait, newOpUpdateCmd(&cf))
	return op
}

// checkOpID checks an operation id given on the command line before
// anything is sent.
func checkOpID(cmd *cobra.Command, id string) error {
	if err := subjects.ValidateToken("operation id", id); err != nil {
		return usageError{fmt.Errorf("%s: %w", cmd.CommandPath(), err)}
	}
	return nil
}

func readFile(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(name)
}

func stateWord(s pb.OperationState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "OPERATION_STATE_"))
}

func writeStatuses(w io.Writer, output string, sts ...*pb.OperationStatus) error {
	if output == "json" {
		for _, st := range sts {
			if err := writeProto(w, st); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tPOOL\tJOBS (run/done/total)\tFAIR SHARE\tUSAGE\tREASON")
	for _, st := range sts {
		pool, fair, usage, reason := "", 0.0, 0.0, st.GetError().GetMessage()
		if ts := st.GetTrees(); len(ts) > 0 {
			pool, fair, usage = ts[0].GetPool(), ts[0].GetFairShare(), ts[0].GetUsageShare()
			if r := ts[0].GetPendingReason(); r != nil && reason == "" {
				reason = r.GetMessage()
			}
		}
		j := st.GetJobs()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d/%d\t%.3f\t%.3f\t%s\n", st.GetId(), stateWord(st.GetState()), pool,
			j.GetRunning(), j.GetCompleted(), j.GetTotal(), fair, usage, reason)
	}
	return tw.Flush()
}
