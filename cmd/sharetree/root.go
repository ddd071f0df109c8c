package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sharetree/sharetree/internal/scenario"
)

// usageError marks bad command-line input (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "sharetree",
		Short: "sharetree: a hierarchical fair-share cluster scheduler",
		Long: "sharetree shares a cluster between pools of operations by hierarchical dominant-resource fairness\n" +
			"with strong and integral (burst, relaxed) guarantees, in the lineage of the YTsaurus scheduler.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.Args = noArgs
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newFairshareCmd(), newSimCmd(), newDemoCmd(), newServerCmd(), newAgentCmd(), newOpCmd(), newEventsCmd(), newLoadCmd(), newNkeyCmd(),
		newTreeCmd(), newPoolCmd(), newClusterCmd(), newApplyCmd(), newGetCmd())
	return root
}

// flagError makes a flag parsing error a usage error. A negative number
// given as a value ("pool set a/b weight -1") reads as a shorthand flag;
// the error then says how to pass it.
func flagError(cmd *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if errors.As(err, &ne) && ne.GetSpecifiedShortnames() != "" {
		if _, perr := strconv.ParseFloat("-"+ne.GetSpecifiedShortnames(), 64); perr == nil {
			err = fmt.Errorf("%w (a value that starts with '-' goes after \"--\": %s ... -- -%s)", err, cmd.CommandPath(), ne.GetSpecifiedShortnames())
		}
	}
	return usageError{err}
}

// noArgs rejects positional arguments as bad input.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("%s: unexpected argument %q (see --help)", cmd.CommandPath(), args[0])}
	}
	return nil
}

// exitCode maps an error to the process exit status.
func exitCode(err error) int {
	var ue usageError
	switch {
	case errors.As(err, &ue), errors.Is(err, scenario.ErrInvalidScenario), errors.Is(err, fs.ErrNotExist),
		errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EISDIR): // -f names a directory
		return 2
	default:
		return 1
	}
}

func writeError(w io.Writer, err error) {
	fmt.Fprintf(w, "sharetree: %v\n", err)
}
