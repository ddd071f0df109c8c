package failpoint

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// The points, in the order of a job's life.
const (
	// StartsBeforeReply: a node's heartbeat pass decided to start jobs,
	// and the reply that tells the node has not been sent.
	StartsBeforeReply = "starts-before-reply"
	// StartsAfterReply: the reply that starts jobs was sent (flushed),
	// and nothing else was done for them yet.
	StartsAfterReply = "starts-after-reply"
	// JournalBeforeWrite: completed jobs reported by nodes are about to
	// be written to the completions journal.
	JournalBeforeWrite = "journal-before-write"
	// JournalAfterWrite: they were written, and their nodes were not told
	// yet.
	JournalAfterWrite = "journal-after-write"
)

// Points lists every point.
var Points = []string{StartsBeforeReply, StartsAfterReply, JournalBeforeWrite, JournalAfterWrite}

// EnvVar is the environment variable the server command arms points from.
const EnvVar = "SHARETREE_FAILPOINTS"

// ErrBadSpec is wrapped by Enable's refusals.
var ErrBadSpec = errors.New("failpoint: bad specification")

type point struct {
	fireAt int64 // the hit that fires (1: the first)
	hits   atomic.Int64
	// panics: the point panics in its caller instead of running the
	// set's action ("point=panic").
	panics bool
}

// Actions a point may name after "=" (the default is the set's action).
const (
	// ActionKill runs the set's action (Kill unless Enable was given one).
	ActionKill = "kill"
	// ActionPanic panics in the code that hit the point: in an actor, a
	// panic its supervision handles (reliability test 22).
	ActionPanic = "panic"
)

type armedSet struct {
	points map[string]*point
	action func(name string)
}

var armed atomic.Pointer[armedSet]

// Enable arms the points of spec ("point[@N][=panic],..."; "" disarms
// every point) with action, run when one fires (nil: Kill); a point given
// "=panic" panics instead. It names what is wrong with a bad spec: an
// unknown point or action, a bad or non-positive N, a point twice.
func Enable(spec string, action func(name string)) error {
	if strings.TrimSpace(spec) == "" {
		armed.Store(nil)
		return nil
	}
	set := &armedSet{points: map[string]*point{}, action: action}
	if set.action == nil {
		set.action = Kill
	}
	for _, item := range strings.Split(spec, ",") {
		item, act, hasAct := strings.Cut(strings.TrimSpace(item), "=")
		name, n, hasN := strings.Cut(item, "@")
		if !slices.Contains(Points, name) {
			return fmt.Errorf("%w: unknown point %q (want one of %s)", ErrBadSpec, name, strings.Join(Points, ", "))
		}
		if set.points[name] != nil {
			return fmt.Errorf("%w: point %q given twice", ErrBadSpec, name)
		}
		p := &point{fireAt: 1}
		switch {
		case !hasAct || act == ActionKill:
		case act == ActionPanic:
			p.panics = true
		default:
			return fmt.Errorf("%w: %q: unknown action %q (want %s or %s)", ErrBadSpec, item, act, ActionKill, ActionPanic)
		}
		if hasN {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil || v < 1 {
				return fmt.Errorf("%w: %q: the hit to fire at must be a positive integer, got %q", ErrBadSpec, item, n)
			}
			p.fireAt = v
		}
		set.points[name] = p
	}
	armed.Store(set)
	return nil
}

// Hit counts a hit of point name and, when it fires, runs last (if not
// nil) and then the action. Unarmed, it returns at once.
func Hit(name string, last func()) {
	set := armed.Load()
	if set == nil {
		return
	}
	p := set.points[name]
	if p == nil || p.hits.Add(1) != p.fireAt {
		return
	}
	if last != nil {
		last()
	}
	if p.panics {
		panic("failpoint " + name)
	}
	set.action(name)
}

// Armed reports whether any point is armed (to skip work a point needs,
// such as counting, when none is).
func Armed() bool { return armed.Load() != nil }
