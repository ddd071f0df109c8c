package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sharetree/sharetree/internal/natsauth"
	"github.com/sharetree/sharetree/internal/testutil"
)

// TestSIGHUPReloadsTheAuthFile: `sharetree server --auth FILE` reads the
// file again on SIGHUP. A file that does not parse is logged with what is
// wrong and changes nothing (the agent stays connected); one without the
// agent's node disconnects the agent at once and keeps it out.
func TestSIGHUPReloadsTheAuthFile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a scheduler process")
	}
	cl, n1 := mustKey(t), mustKey(t)
	both := "version: 1\nclients: [{name: ci, nkey: " + cl.Public() + "}]\nagents: [{node: n1, nkey: " + n1.Public() + "}]\n"
	auth := writeFile(t, "auth.yaml", both)
	port := freePort(t)
	s := launchChild(t, "server", "--data-dir", t.TempDir(), "--port", strconv.Itoa(port), "--http-addr", "",
		"--auth", auth, "--log-level", "info")
	s.waitServing(t, 30*time.Second)
	url := "nats://127.0.0.1:" + strconv.Itoa(port)

	opts, err := natsauth.AgentOptions("n1", n1)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := nats.Connect(url, append(opts, nats.NoReconnect())...)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()

	hup := func(what string, re *regexp.Regexp, after *regexp.Regexp) {
		t.Helper()
		if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, 10*time.Second, what, func() bool { return s.logged(re, after) })
	}
	// A broken file: logged, nothing changes.
	if err := os.WriteFile(auth, []byte("version: 1\nagents: [{node: n1, nkey: nope}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	refused := regexp.MustCompile(`SIGHUP: auth file not reloaded; the users in force stay" file=\S+ err=".*agents\[0\]\.nkey \(line 2\)`)
	hup("the broken file refused", refused, nil)
	if err := agent.Flush(); err != nil || !agent.IsConnected() {
		t.Fatalf("after a refused reload the agent's connection is gone: %v", err)
	}

	// The agent's node removed: it is cut off and kept out.
	if err := os.WriteFile(auth, []byte("version: 1\nclients: [{name: ci, nkey: "+cl.Public()+"}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hup("the file reloaded", regexp.MustCompile(`msg="auth file reloaded" admins=0 clients=1 agents=0 added=\[\] removed="\[agent n1 `+n1.Public()+`\]"`), refused)
	testutil.WaitFor(t, 10*time.Second, "the agent disconnected", func() bool { return !agent.IsConnected() })
	if again, err := nats.Connect(url, append(opts, nats.NoReconnect())...); err == nil {
		again.Close()
		t.Fatal("the removed agent connected again")
	} else if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Errorf("the removed agent's connect: %v, want an authorization violation", err)
	}
	cOpts, err := natsauth.ClientOptions(cl)
	if err != nil {
		t.Fatal(err)
	}
	c, err := nats.Connect(url, cOpts...)
	if err != nil {
		t.Fatalf("the client kept in the file cannot connect: %v", err)
	}
	c.Close()
}

func mustKey(t *testing.T) *natsauth.Key {
	t.Helper()
	k, err := natsauth.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}
