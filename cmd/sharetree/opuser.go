package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sharetree/sharetree/internal/client"
	"github.com/sharetree/sharetree/subjects"
)

// userFlag adds --user to an op command that changes an operation
// (verb: "abort" or "update").
func userFlag(cmd *cobra.Command, user *string, verb string) {
	cmd.Flags().StringVar(user, "user", "", fmt.Sprintf("%s as this user, on the user's own subject: the scheduler lets only the operation's owner %s it, and a NATS server secured with --auth accepts the request only with that client's nkey (a client there must give its name here)", verb, verb))
}

// checkUser checks --user (empty: none).
func checkUser(user string) error {
	if user == "" {
		return nil
	}
	if err := subjects.ValidateToken("user name", user); err != nil {
		return usageError{fmt.Errorf("--user: %w", err)}
	}
	return nil
}

// asUser is c, or c sending as user when one is given (checked by
// checkUser).
func asUser(c *client.Client, user string) *client.Client {
	if user == "" {
		return c
	}
	if cu, err := c.WithUser(user); err == nil {
		return cu
	}
	return c
}
