// Command loadclient sends steady load to the graceful-service instances
// registered in a directory, through package client, and reports how many
// requests completed, failed and were retried.
//
//	loadclient --registry-dir DIR [--concurrency 4] [--ms 50] [--requests 0]
//
// It runs until --requests requests were sent (0: until SIGINT or SIGTERM),
// lets the requests in flight finish, prints the counters and exits 1 when
// any request failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/sharetree/sharetree/deploy/examples/graceful-service/client"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("loadclient", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("registry-dir", "", "directory of the service registry (required)")
	workers := fs.Int("concurrency", 4, "requests in flight at a time")
	ms := fs.Int("ms", 50, "work time of each request, milliseconds")
	total := fs.Int64("requests", 0, "requests to send; 0 sends until interrupted")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" || *workers < 1 || *ms < 0 || *total < 0 {
		fmt.Fprintln(stderr, "loadclient: --registry-dir is required; --concurrency must be >= 1, --ms and --requests >= 0")
		return 2
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var stop atomic.Bool
	go func() {
		<-sigs
		stop.Store(true)
	}()

	c := client.New(*dir, client.Options{})
	path := fmt.Sprintf("/work?ms=%d", *ms)
	var sent atomic.Int64
	var wg sync.WaitGroup
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if *total > 0 && sent.Add(1) > *total {
					return
				}
				if _, err := c.Get(context.Background(), path); err != nil {
					fmt.Fprintln(stderr, "loadclient:", err)
				}
			}
		}()
	}
	wg.Wait()
	s := c.Stats()
	fmt.Fprintf(stdout, "completed=%d failed=%d retried=%d\n", s.Completed, s.Failed, s.Retried)
	for _, id := range slices.Sorted(maps.Keys(s.PerInstance)) {
		fmt.Fprintf(stdout, "instance %s completed=%d\n", id, s.PerInstance[id])
	}
	if s.Failed > 0 {
		return 1
	}
	return 0
}
