package preemption

import (
	"github.com/sharetree/sharetree/scheduler"
)

// The table tests use a cluster of 100 cpu and 100 memory units, so that an
// amount of x cpu is a share of x/100.

// cpu is x cores and no memory.
func cpu(x float64) scheduler.Resources { return scheduler.Resources{scheduler.CPU: x} }

// cpuShare is a share of x in cpu only.
func cpuShare(x float64) scheduler.Share { return scheduler.Share{scheduler.CPU: x} }

var cluster = scheduler.Resources{scheduler.CPU: 100, scheduler.Memory: 100}

var defaultThresholds = Thresholds{Preemption: 1, Aggressive: 0.2}

// job is a job of x cpu.
func job(id, op string, seq uint64, x float64, class scheduler.PreemptionClass) Job {
	return Job{ID: JobID(id), Operation: scheduler.OperationID(op), Resources: cpu(x), Seq: seq, Class: class}
}

// interrupting marks a job as already being interrupted.
func interrupting(j Job) Job {
	j.Interrupting = true
	return j
}

// opBuilder builds an Operation in cpu terms (shares of the 100-cpu
// cluster).
type opBuilder struct{ o Operation }

// op is an operation with fair share fs, usage u (cpu) and a demand that
// the fair share does not cover.
func op(id string, fs, usage float64) *opBuilder {
	return &opBuilder{Operation{ID: scheduler.OperationID(id), FairShare: cpuShare(fs), Demand: cpuShare(1), Usage: cpu(usage)}}
}

func (b *opBuilder) starving() *opBuilder { b.o.Starvation = scheduler.Starving; return b }
func (b *opBuilder) aggressive() *opBuilder {
	b.o.Starvation = scheduler.AggressivelyStarving
	return b
}
func (b *opBuilder) graceful() *opBuilder { b.o.Mode = ModeGraceful; return b }
func (b *opBuilder) demand(d float64) *opBuilder {
	b.o.Demand = cpuShare(d)
	return b
}
func (b *opBuilder) next(x float64) *opBuilder {
	b.o.NextJob, b.o.PendingJobs = cpu(x), 1
	return b
}
func (b *opBuilder) pools(ids ...string) *opBuilder {
	for _, id := range ids {
		b.o.Pools = append(b.o.Pools, scheduler.PoolID(id))
	}
	return b
}
func (b *opBuilder) nonPreemptible(r scheduler.Resources) *opBuilder {
	b.o.NonPreemptibleUsage = r
	return b
}
func (b *opBuilder) build() Operation { return b.o }

// pool is a pool with a cpu guarantee share g and usage u cpu.
func pool(id string, g, usage float64) Pool {
	return Pool{ID: scheduler.PoolID(id), Guarantee: cpuShare(g), Usage: cpu(usage)}
}

// node10 is a 10-cpu node with free cpu.
func node10(free float64) Node {
	return Node{ID: "n1", Total: cpu(10), Free: cpu(free)}
}

// victim is the expected victim of job j for starving operation for.
func victim(j Job, forOp string, status scheduler.StarvationStatus, floor float64, th Thresholds) Victim {
	return Victim{Job: j.ID, Operation: j.Operation, Resources: j.Resources, Seq: j.Seq,
		Reason: Reason{For: scheduler.OperationID(forOp), ForStarvation: status, Class: j.Class, VictimFloor: floor, Thresholds: th}}
}

func nan() float64 { var z float64; return z / z }

// cloneView deep-copies a view, to check that it is not modified.
func cloneView(v View) View {
	c := v
	c.Jobs = append([]Job(nil), v.Jobs...)
	c.Pools = append([]Pool(nil), v.Pools...)
	c.Operations = append([]Operation(nil), v.Operations...)
	for i := range c.Operations {
		c.Operations[i].Pools = append([]scheduler.PoolID(nil), v.Operations[i].Pools...)
	}
	return c
}

// reserved is n with cpu reserved by earlier preemptions.
func reserved(n Node, cpus float64) Node {
	n.Reserved = cpu(cpus)
	return n
}
