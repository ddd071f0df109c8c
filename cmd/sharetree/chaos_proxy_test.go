package main

import (
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"
)

// chaosProxy is a fault-injecting TCP proxy on a fixed loopback port, in
// front of one node agent's NATS connection: the agent connects to the
// proxy and keeps reconnecting to it, and the proxy dials the scheduler's
// port anew for each connection it accepts (so it outlives the scheduler's
// restarts). It can partition the agent away (drop its connections and
// refuse or blackhole new ones) and delay every chunk of bytes it forwards.
//
// There is no duplication fault: duplicating bytes of a TCP stream would
// corrupt the NATS protocol rather than duplicate a message. Duplicated,
// reordered and stale heartbeats and responses are covered by the
// scheduler's and the agent's own tests (actors, nodeagent).
type chaosProxy struct {
	name     string
	upstream string // the scheduler's NATS host:port
	ln       net.Listener
	done     chan struct{} // closed by close
	wg       sync.WaitGroup

	mu          sync.Mutex
	conns       map[net.Conn]struct{} // every open connection, both sides
	partitioned bool
	blackhole   bool       // while partitioned: hold new connections silent, else close them at once
	delaying    bool       // every chunk waits chaosDelay ± chaosJitter
	rng         *rand.Rand // the delays' jitter, seeded by each delay fault
	closed      bool
}

const (
	chaosDelay  = 100 * time.Millisecond
	chaosJitter = 50 * time.Millisecond
)

func startChaosProxy(t *testing.T, name, upstream string) *chaosProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &chaosProxy{name: name, upstream: upstream, ln: ln, done: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

// url is what the agent connects to.
func (p *chaosProxy) url() string { return "nats://" + p.ln.Addr().String() }

func (p *chaosProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		switch {
		case p.closed:
			p.mu.Unlock()
			_ = c.Close()
			continue
		case p.partitioned && p.blackhole:
			// Held open and silent: the agent's connect times out. Closed
			// when the partition heals.
			p.conns[c] = struct{}{}
			p.mu.Unlock()
			continue
		case p.partitioned:
			p.mu.Unlock()
			_ = c.Close() // refused
			continue
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Go(func() { p.forward(c) })
	}
}

// forward dials the scheduler for the accepted connection c and pumps
// bytes both ways until either side ends or the proxy drops them.
func (p *chaosProxy) forward(c net.Conn) {
	up, err := net.DialTimeout("tcp", p.upstream, time.Second)
	if err != nil {
		p.drop(c) // the scheduler is down: the agent tries again
		return
	}
	p.mu.Lock()
	if _, ok := p.conns[c]; !ok || p.closed {
		// Dropped while dialing (a partition began).
		p.mu.Unlock()
		_ = up.Close()
		return
	}
	p.conns[up] = struct{}{}
	p.mu.Unlock()
	var pumps sync.WaitGroup
	pumps.Go(func() { p.pump(c, up) })
	pumps.Go(func() { p.pump(up, c) })
	pumps.Wait()
}

// chunk is bytes read from one side, to be written to the other at due.
type chunk struct {
	b   []byte
	due time.Time
}

// pump copies src to dst through a queue, so that a chunk delayed does not
// let a later one overtake it; when either side fails, both are dropped.
func (p *chaosProxy) pump(src, dst net.Conn) {
	queue := make(chan chunk, 256)
	stop, wrote := make(chan struct{}), make(chan struct{})
	var writer sync.WaitGroup
	writer.Go(func() {
		defer close(wrote)
		defer p.drop(src, dst)
		for ch := range queue {
			if wait := time.Until(ch.due); wait > 0 {
				timer := time.NewTimer(wait)
				select {
				case <-timer.C:
				case <-stop:
					timer.Stop()
					return
				case <-p.done:
					timer.Stop()
					return
				}
			}
			if _, err := dst.Write(ch.b); err != nil {
				return
			}
		}
	})
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			select {
			case queue <- chunk{b: append([]byte(nil), buf[:n]...), due: time.Now().Add(p.chunkDelay())}:
			case <-wrote: // the writer failed
				err = net.ErrClosed
			case <-p.done:
				err = net.ErrClosed
			}
		}
		if err != nil {
			close(stop)
			close(queue)
			p.drop(src, dst)
			writer.Wait()
			return
		}
	}
}

// chunkDelay is how long the next chunk waits: 0, or 100 ms ± 50 ms while
// a delay fault is on.
func (p *chaosProxy) chunkDelay() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.delaying {
		return 0
	}
	return chaosDelay - chaosJitter + time.Duration(p.rng.Int64N(int64(2*chaosJitter)+1))
}

// drop closes connections and forgets them.
func (p *chaosProxy) drop(cs ...net.Conn) {
	p.mu.Lock()
	for _, c := range cs {
		delete(p.conns, c)
	}
	p.mu.Unlock()
	for _, c := range cs {
		_ = c.Close()
	}
}

// dropAllLocked forgets every connection and returns them, to close.
func (p *chaosProxy) dropAllLocked() []net.Conn {
	var cs []net.Conn
	for c := range p.conns {
		cs = append(cs, c)
		delete(p.conns, c)
	}
	return cs
}

// partition drops the agent's connections and, until heal, refuses new
// ones (closes them at once) or, with blackhole, holds them silent.
func (p *chaosProxy) partition(blackhole bool) {
	p.mu.Lock()
	p.partitioned, p.blackhole = true, blackhole
	cs := p.dropAllLocked()
	p.mu.Unlock()
	for _, c := range cs {
		_ = c.Close()
	}
}

// heal ends a partition: the blackholed connections are closed, and new
// ones go through again.
func (p *chaosProxy) heal() {
	p.mu.Lock()
	var cs []net.Conn
	if p.partitioned && p.blackhole {
		cs = p.dropAllLocked()
	}
	p.partitioned, p.blackhole = false, false
	p.mu.Unlock()
	for _, c := range cs {
		_ = c.Close()
	}
}

// setDelay turns the delay fault on (jitter drawn from a generator seeded
// with seed) or off.
func (p *chaosProxy) setDelay(on bool, seed uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delaying = on
	if on {
		p.rng = rand.New(rand.NewPCG(seed, 0x70726f7879))
	}
}

// close stops the proxy and waits for its goroutines.
func (p *chaosProxy) close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.done)
	cs := p.dropAllLocked()
	p.mu.Unlock()
	_ = p.ln.Close()
	for _, c := range cs {
		_ = c.Close()
	}
	p.wg.Wait()
}
