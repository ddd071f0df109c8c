package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sharetree/sharetree/deploy/examples/graceful-service/client"
	"github.com/sharetree/sharetree/deploy/examples/graceful-service/registry"
	"github.com/sharetree/sharetree/internal/testutil"
)

// binary is the service built once for the package's tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "graceful-service-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "graceful-service")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the service:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// instance is one service process.
type instance struct {
	id     string
	cmd    *exec.Cmd
	stderr *testutil.LockedBuffer
	done   chan struct{}
	code   int
}

func startInstance(t *testing.T, dir, id string, args ...string) *instance {
	t.Helper()
	in := &instance{id: id, stderr: &testutil.LockedBuffer{}, done: make(chan struct{})}
	in.cmd = exec.Command(binary, append([]string{"--registry-dir", dir}, args...)...)
	in.cmd.Env = append(os.Environ(), "SHARETREE_JOB_ID="+id)
	in.cmd.Stderr = in.stderr
	if err := in.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := in.cmd.Wait()
		in.code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			in.code = ee.ExitCode()
		} else if err != nil {
			in.code = -1
		}
		close(in.done)
	}()
	t.Cleanup(func() {
		select {
		case <-in.done:
		default:
			_ = in.cmd.Process.Kill()
			<-in.done
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", id, in.stderr.String())
		}
	})
	testutil.WaitFor(t, 60*time.Second, id+" registered", func() bool {
		_, ok, _ := registry.Lookup(dir, id)
		return ok
	})
	return in
}

func (in *instance) exited() bool {
	select {
	case <-in.done:
		return true
	default:
		return false
	}
}

// stats reads an instance's /stats; ok is false when it cannot.
func stats(dir, id string) (Stats, bool) {
	addr, ok, err := registry.Lookup(dir, id)
	if err != nil || !ok {
		return Stats{}, false
	}
	resp, err := http.Get("http://" + addr + "/stats")
	if err != nil {
		return Stats{}, false
	}
	defer resp.Body.Close()
	var st Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return Stats{}, false
	}
	return st, true
}

// running reports whether a /work request of ms milliseconds is in flight
// on the instance.
func running(dir, id string, ms int64) bool {
	st, ok := stats(dir, id)
	return ok && slices.Contains(st.InFlightWorkMS, ms)
}

// load runs workers sending /work requests through c until stop.
type load struct {
	stop atomic.Bool
	wg   sync.WaitGroup
	errs chan error
}

func startLoad(c *client.Client, workers int, path string) *load {
	l := &load{errs: make(chan error, 1024)}
	for range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for !l.stop.Load() {
				if _, err := c.Get(context.Background(), path); err != nil {
					select {
					case l.errs <- err:
					default:
					}
				}
			}
		}()
	}
	return l
}

func (l *load) finish() []error {
	l.stop.Store(true)
	l.wg.Wait()
	close(l.errs)
	var out []error
	for err := range l.errs {
		out = append(out, err)
	}
	return out
}

// Two instances under steady load; one is interrupted in the middle while
// a long request of its own is in flight. It unregisters, finishes that
// request and the load's, and exits 0; the client fails nothing and the
// other instance takes the rest of the load.
func TestInterruptedInstanceDrainsWithoutFailures(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			i1 := startInstance(t, dir, "op.0.0.0")
			i2 := startInstance(t, dir, "op.0.1.0")
			c := client.New(dir, client.Options{})
			l := startLoad(c, 6, "/work?ms=20")
			testutil.WaitFor(t, 60*time.Second, "both instances serving", func() bool {
				s := c.Stats()
				return s.PerInstance[i1.id] >= 10 && s.PerInstance[i2.id] >= 10
			})

			// A long request on i1, in flight when the signal arrives.
			addr1, _, _ := registry.Lookup(dir, i1.id)
			type result struct {
				body string
				err  error
			}
			var long chan result
			for long == nil {
				ch := make(chan result, 1)
				go func() {
					resp, err := http.Get("http://" + addr1 + "/work?ms=1500")
					if err != nil {
						ch <- result{err: err}
						return
					}
					defer resp.Body.Close()
					b, err := io.ReadAll(resp.Body)
					if err == nil && resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %s", resp.Status)
					}
					ch <- result{body: string(b), err: err}
				}()
				testutil.WaitFor(t, 60*time.Second, "the long request in flight on i1", func() bool { return running(dir, i1.id, 1500) || len(ch) > 0 })
				select {
				case r := <-ch:
					t.Logf("the long request finished before the signal (%v); again", r.err)
					continue
				default:
				}
				if err := i1.cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				long = ch
			}

			testutil.WaitFor(t, 60*time.Second, "i1 to exit", i1.exited)
			if i1.code != 0 {
				t.Fatalf("i1 exited %d, want 0; stderr:\n%s", i1.code, i1.stderr.String())
			}
			r := <-long
			if r.err != nil || !strings.HasPrefix(r.body, i1.id+" ") {
				t.Fatalf("the request in flight at the signal: body %q, err %v", r.body, r.err)
			}
			logs := i1.stderr.String()
			m := regexp.MustCompile(`msg=drained .*in_flight_at_signal=(\d+) finished_after_signal=(\d+)`).FindStringSubmatch(logs)
			if m == nil {
				t.Fatalf("no drain report in i1's log:\n%s", logs)
			}
			if n, _ := strconv.Atoi(m[1]); n < 1 {
				t.Errorf("i1 had %d requests in flight at the signal, want >= 1", n)
			}
			if n, _ := strconv.Atoi(m[2]); n < 1 {
				t.Errorf("i1 finished %d requests after the signal, want >= 1", n)
			}
			if insts, _ := registry.List(dir); len(insts) != 1 || insts[0].ID != i2.id {
				t.Errorf("registry after the drain: %v", insts)
			}

			// The load goes on against i2 alone.
			after := c.Stats().PerInstance[i2.id]
			testutil.WaitFor(t, 60*time.Second, "i2 to take the load", func() bool { return c.Stats().PerInstance[i2.id] >= after+30 })
			if errs := l.finish(); len(errs) > 0 {
				t.Errorf("%d requests failed, first: %v", len(errs), errs[0])
			}
			s := c.Stats()
			t.Logf("completed %d (per instance %v), retried %d", s.Completed, s.PerInstance, s.Retried)
			if s.Failed != 0 || s.Canceled != 0 {
				t.Errorf("stats %+v: want no failed or canceled request", s)
			}

			if err := i2.cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, 60*time.Second, "i2 to exit", i2.exited)
			if i2.code != 0 {
				t.Errorf("i2 exited %d", i2.code)
			}
		})
	}
}

// A drain that cannot finish in --drain-timeout exits 1.
func TestDrainTimeoutExitsNonZero(t *testing.T) {
	dir := t.TempDir()
	in := startInstance(t, dir, "slow", "--drain-timeout", "50ms")
	addr, _, _ := registry.Lookup(dir, in.id)
	go func() {
		resp, err := http.Get("http://" + addr + "/work?ms=600000")
		if err == nil {
			resp.Body.Close()
		}
	}()
	testutil.WaitFor(t, 60*time.Second, "the request in flight", func() bool { return running(dir, in.id, 600000) })
	if err := in.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 60*time.Second, "the instance to exit", in.exited)
	if in.code != exitDrainFail {
		t.Fatalf("exit %d, want %d; stderr:\n%s", in.code, exitDrainFail, in.stderr.String())
	}
	if !strings.Contains(in.stderr.String(), "drain failed") {
		t.Errorf("no drain failure in the log:\n%s", in.stderr.String())
	}
	if _, ok, _ := registry.Lookup(dir, in.id); ok {
		t.Error("still registered after the interruption")
	}
}

func TestUsageErrors(t *testing.T) {
	t.Setenv("SHARETREE_JOB_ID", "")
	dir := t.TempDir()
	cases := map[string][]string{
		"no registry": {},
		"no id":       {"--registry-dir", dir},
		"bad flag":    {"--nope"},
		"bad work":    {"--registry-dir", dir, "--id", "x", "--work", "-1s"},
		"bad drain":   {"--registry-dir", dir, "--id", "x", "--drain-timeout", "0s"},
		"hidden id":   {"--registry-dir", dir, "--id", ".x"},
		"bad listen":  {"--registry-dir", dir, "--id", "x", "--listen", "256.0.0.1:0"},
	}
	want := map[string]int{"hidden id": exitServeError, "bad listen": exitServeError}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var stderr bytes.Buffer
			code, exp := run(args, &stderr), exitUsage
			if w, ok := want[name]; ok {
				exp = w
			}
			if code != exp {
				t.Errorf("run(%q) = %d, want %d; stderr:\n%s", args, code, exp, stderr.String())
			}
		})
	}
}
