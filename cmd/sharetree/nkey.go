package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/sharetree/sharetree/internal/natsauth"
)

func newNkeyCmd() *cobra.Command {
	var seedFile string
	cmd := &cobra.Command{
		Use:   "nkey --seed-file FILE",
		Short: "Make a NATS user nkey: its seed goes to FILE (readable by its owner only), its public key to stdout",
		Long: "nkey makes a user's key pair for a secured NATS server. The public key (starting with U) goes into\n" +
			"the server's auth file (`server --auth`), as an admin, a client or a node's agent; the seed file goes\n" +
			"with --nkey to the commands that user runs. An existing FILE is not overwritten.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if seedFile == "" {
				return usageError{errors.New("nkey: --seed-file is required")}
			}
			key, err := natsauth.NewKey()
			if err != nil {
				return err
			}
			seed, err := key.Seed()
			if err != nil {
				return err
			}
			f, err := os.OpenFile(seedFile, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return usageError{fmt.Errorf("nkey: --seed-file: %w", err)}
			}
			_, werr := f.Write(append(seed, '\n'))
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				return fmt.Errorf("nkey: write %s: %w", seedFile, werr)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), key.Public())
			return err
		},
	}
	cmd.Flags().StringVar(&seedFile, "seed-file", "", "file to write the new key's seed to; required, must not exist")
	return cmd
}
