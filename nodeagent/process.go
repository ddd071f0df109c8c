package nodeagent

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	pb "github.com/sharetree/sharetree/messages/gen/sharetree/v1"
)

// outputGrace bounds the wait for a job's output pipe to close once its
// process group is gone (a process that left the group may still hold it).
const outputGrace = 2 * time.Second

// startProcessLocked starts a command job in its own process group, with its
// stdout and stderr going to one bounded log tail. Two goroutines follow the
// process: one copies its output, one waits for it and records the result.
func (a *Agent) startProcessLocked(j *job, c *pb.Command) error {
	argv := c.GetArgv()
	if len(argv) == 0 || argv[0] == "" {
		return fmt.Errorf("%w: the command has no program (argv is empty)", ErrBadJobSpec)
	}
	dir, tmp := c.GetWorkingDir(), ""
	if dir != "" {
		// exec reports a bad directory as the program's fork/exec failing.
		if fi, err := os.Stat(dir); err != nil {
			return fmt.Errorf("working dir: %w", err)
		} else if !fi.IsDir() {
			return fmt.Errorf("working dir %s is not a directory", dir)
		}
	} else {
		var err error
		if tmp, err = os.MkdirTemp(a.cfg.WorkDir, "sharetree-job-"+safeName(j.id)+"-"); err != nil {
			return fmt.Errorf("job directory: %w", err)
		}
		dir = tmp
	}
	r, w, err := os.Pipe()
	if err != nil {
		removeDir(tmp)
		return fmt.Errorf("output pipe: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = jobEnv(j, c.GetEnv())
	cmd.Stdout, cmd.Stderr = w, w // *os.File: no copying goroutine inside exec
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	_ = w.Close() // the child has its copy
	if err != nil {
		_ = r.Close()
		removeDir(tmp)
		return err
	}
	j.proc, j.tmpDir, j.logs = cmd.Process, tmp, newLogTail(a.cfg.JobLogLimit)
	copied := make(chan struct{})
	a.wg.Add(2)
	go func() {
		defer a.wg.Done()
		defer close(copied)
		_, _ = io.Copy(j.logs, r)
	}()
	go func() {
		defer a.wg.Done()
		a.waitProcess(j, cmd, r, copied)
	}()
	return nil
}

// waitProcess waits for the job's process, kills what is left of its group,
// collects the output and records the result.
func (a *Agent) waitProcess(j *job, cmd *exec.Cmd, out *os.File, copied <-chan struct{}) {
	waitErr := cmd.Wait()
	a.mu.Lock()
	j.exited = true // how it exited decides its result from here on
	a.mu.Unlock()
	a.killGroup(j, syscall.SIGKILL) // leftovers of the job die with it
	select {
	case <-copied:
	case <-time.After(outputGrace):
		a.log.Warn("job output still open after its process group exited; closing it", "job", j.id)
	}
	_ = out.Close() // also ends the copy if it is still blocked
	<-copied
	removeDir(j.tmpDir)

	a.mu.Lock()
	defer a.mu.Unlock()
	code, desc := exitStatus(cmd.ProcessState, waitErr)
	switch {
	case j.abortReason != "":
		a.finishLocked(j, pb.JobState_JOB_STATE_ABORTED, code, j.abortReason, j.interrupted)
	case j.timedOut:
		msg := reasonInterruptKill
		if j.interruptReason != "" {
			msg += ": " + j.interruptReason
		}
		a.finishLocked(j, pb.JobState_JOB_STATE_ABORTED, code, msg, true)
	case j.interrupted:
		a.finishLocked(j, pb.JobState_JOB_STATE_COMPLETED, code, "", true)
	case code == 0 && waitErr == nil:
		a.finishLocked(j, pb.JobState_JOB_STATE_COMPLETED, 0, "", false)
	default:
		a.finishLocked(j, pb.JobState_JOB_STATE_FAILED, code, desc, false)
	}
}

// exitStatus is the job's exit code (128+signal when a signal killed it,
// as shells report it) and a description of a non-zero exit.
func exitStatus(ps *os.ProcessState, waitErr error) (int32, string) {
	if ps == nil {
		return -1, fmt.Sprintf("wait: %v", waitErr)
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int32(ws.Signal()), "killed by signal " + ws.Signal().String()
	}
	code := int32(ps.ExitCode())
	return code, fmt.Sprintf("exit status %d", code)
}

// killGroup sends sig to j's process group; a group already gone is fine.
func (a *Agent) killGroup(j *job, sig syscall.Signal) {
	if j.proc == nil {
		return
	}
	if err := syscall.Kill(-j.proc.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		a.log.Warn("signal job process group", "job", j.id, "signal", sig, "err", err)
	}
}

// jobEnv is the agent's environment, the job's identity, then the spec's
// variables in key order (later entries win).
func jobEnv(j *job, extra map[string]string) []string {
	env := append(os.Environ(), "SHARETREE_JOB_ID="+j.id, "SHARETREE_OPERATION_ID="+j.opID)
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// safeName makes a job id usable in a file name.
func safeName(id string) string {
	s := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, id)
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}

func removeDir(dir string) {
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}
