package nodeagent_test

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sharetree/sharetree/internal/natsembed"
	"github.com/sharetree/sharetree/internal/testutil"
)

// TestAFinishedJobLargerThanAHeartbeatIsReported: with NATS's max_payload
// smaller than a finished job's log tail, the job is still reported (its
// log tail cut to fit, its end kept), and, once acknowledged, no longer
// holds back the finished jobs sorted after it.
func TestAFinishedJobLargerThanAHeartbeatIsReported(t *testing.T) {
	ec := natsembed.Default(t.TempDir())
	ec.MaxPayload = 16 << 10
	srv, err := natsembed.Start(ec, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	nc := testutil.Connect(t, srv)
	sched := newFakeScheduler(t, nc, "n", func(s *fakeScheduler) { s.ackAll = true })
	// 40 KB of output, more than a heartbeat can carry; "a-big" sorts
	// first, and "b-small" ends after it.
	done := filepath.Join(t.TempDir(), "big-done")
	sched.start(shJob("a-big", `i=0; while [ $i -lt 4000 ]; do echo "line $i"; i=$((i+1)); done; echo end; touch "$DONE"`, map[string]string{"DONE": done}),
		shJob("b-small", `while [ ! -e "$DONE" ]; do sleep 0.01; done`, map[string]string{"DONE": done}))
	cfg := testConfig(t, "n")
	cfg.JobLogLimit = 64 << 10
	startAgent(t, nc, cfg)

	small := sched.waitFinished(t, "b-small")
	if small.GetExitCode() != 0 || small.GetError() != "" {
		t.Errorf("b-small finished %v", small)
	}
	big := sched.waitFinished(t, "a-big")
	tail := big.GetLogTail()
	if !strings.HasSuffix(tail, "line 3999\nend\n") || len(tail) >= 40000 || !utf8.ValidString(tail) {
		t.Errorf("a-big's log tail is %d bytes ending %q; want its end, cut to fit a heartbeat", len(tail), tail[max(0, len(tail)-40):])
	}
}
