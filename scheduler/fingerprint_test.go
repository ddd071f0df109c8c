package scheduler

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// The fingerprint test pins the engine's output bit for bit: a SHA-256 over
// a canonical dump of every field of every Result (floats by their bits,
// maps in key order, pointers followed) of a fixed set of updates — single
// updates of generated trees of several shapes, and sequences of updates
// through one Engine with the previous state chained, where the snapshot
// changes between updates in values, structure, cluster and configuration.
// The golden values were recorded from the engine before any optimisation
// that must not change results, and recorded again when the generator
// stopped using math.Exp and math.Log (see docs/DETERMINISM.md), from the
// engine that still gave the earlier values, and recorded again when
// MaxFitFactorBySuggestion stopped rounding a limit's crossing past the
// limit (see backInside: results moved by at most 5e-15); they are the
// same on every target. An intended change of results regenerates them with
//
//	go test ./scheduler -run TestFingerprints -update
var updateFingerprints = flag.Bool("update", false, "rewrite testdata/fingerprints.golden from the current engine")

const fingerprintFile = "testdata/fingerprints.golden"

// fingerprintShapes are the trees the fingerprints cover.
func fingerprintShapes() []struct {
	name string
	p    genParams
} {
	var out []struct {
		name string
		p    genParams
	}
	add := func(name string, p genParams) {
		out = append(out, struct {
			name string
			p    genParams
		}{name, p})
	}
	for seed := range uint64(4) {
		add(fmt.Sprintf("defaults-%d", seed), genDefaults(seed))
	}
	busy := genDefaults(11)
	busy.Busy, busy.Ops, busy.Load = true, 400, 1.5
	add("busy", busy)
	fifo := genDefaults(12)
	fifo.FIFOFrac, fifo.Ops = 0.9, 300
	add("fifo", fifo)
	integral := genDefaults(13)
	integral.IntegralFrac, integral.DistributeFreeVolume, integral.Pools = 0.8, true, 60
	add("integral", integral)
	gangs := genDefaults(14)
	gangs.GangFrac, gangs.Busy = 0.3, true
	add("gangs", gangs)
	over := genDefaults(15)
	over.Overcommit, over.InferWeights, over.Load = true, true, 3
	add("overcommit-inferweights", over)
	total := genDefaults(16)
	total.ClusterAsNodes, total.NoUsage = false, true
	add("total-only-nousage", total)
	light := genDefaults(17)
	light.Load, light.LimitFrac = 0.3, 0.5
	add("light-limits", light)
	add("bench-100", benchParams(100, 1000))
	add("bench-1000", benchParams(1000, 10000))
	busyBench := benchParams(300, 3000)
	busyBench.Busy = true
	add("bench-busy-300", busyBench)
	return out
}

// fingerprintSteps is the number of updates in each sequence.
const fingerprintSteps = 14

// fingerprintInvalidStep is the step whose snapshot is made invalid (an
// operation's demand below 0); the next step continues from the valid one.
const fingerprintInvalidStep = 12

// fingerprintVary returns the snapshot of step k of a sequence (k >= 1),
// changed from prev in the k-th way (deterministically, from rng). It never
// modifies prev or anything prev shares.
func fingerprintVary(k int, prev *Snapshot, rng *rand.Rand) *Snapshot {
	s := *prev
	s.Now = prev.Now.Add(time.Second)
	ops := func() []Operation {
		s.Operations = slices.Clone(prev.Operations)
		return s.Operations
	}
	pools := func() []PoolConfig {
		s.Pools = slices.Clone(prev.Pools)
		return s.Pools
	}
	pick := func(n int) int { return rng.IntN(n) }
	switch k % 11 {
	case 1, 6: // the same snapshot one second later
	case 2: // 10 % of the operations change usage and demand
		o := ops()
		for i := range o {
			if rng.IntN(10) != 0 {
				continue
			}
			x := &o[i]
			switch rng.IntN(4) {
			case 0: // becomes idle
				x.Usage = Resources{}
			case 1: // uses more
				x.Usage = x.Usage.Add(x.Demand.Scale(0.25)).Round()
			case 2: // demands more
				x.Demand = x.Demand.Scale(1.5).Round()
			default:
				x.Usage = x.Demand.Scale(0.5).Round()
				x.Demand = x.Demand.Add(x.Usage)
			}
			if rng.IntN(5) == 0 {
				x.PendingJobCount = rng.IntN(20)
			}
		}
	case 3: // 1 % of the operations change, one operation's weight and limits
		o := ops()
		for i := range o {
			if rng.IntN(100) == 0 {
				o[i].Usage[CPU] = math.Round(o[i].Usage[CPU]*0.5*100) / 100
				o[i].Demand[Memory] += 1024
			}
		}
		if len(o) > 0 {
			w := 0.5 + unit(rng)
			o[pick(len(o))].Weight = &w
			o[pick(len(o))].ResourceLimits = PartialResources{}.With(CPU, 3)
			o[pick(len(o))].JobResources = Resources{}
		}
	case 4: // operations removed, added and moved: the structure changes
		o := ops()
		if len(o) > 2 {
			i := pick(len(o) - 1)
			o = slices.Delete(o, i, min(len(o), i+len(o)/50+1))
		}
		n := len(o)
		for j := range 3 {
			if n == 0 {
				break
			}
			x := o[pick(n)]
			x.ID = OperationID(fmt.Sprintf("new-%d-%d", k, j))
			x.Usage = Resources{}
			x.StartTime = s.Now
			o = append(o, x)
		}
		if len(o) > 0 && len(s.Pools) > 0 {
			// Moved to a pool with no child pools (fifo pools may not have
			// any).
			p := s.Pools[pick(len(s.Pools))]
			if !slices.ContainsFunc(s.Pools, func(q PoolConfig) bool { return q.Parent == p.Name }) {
				o[pick(len(o))].Pool = p.Name
			}
		}
		s.Operations = o
	case 5: // the cluster loses a node
		if len(prev.Cluster.Nodes) > 1 {
			s.Cluster = NewClusterFromNodes(prev.Cluster.Nodes[1:])
		} else {
			s.Cluster.Total = prev.Cluster.Total.Scale(0.9).Round()
		}
	case 7: // pool settings: a weight, a limit, a strong guarantee
		p := pools()
		if len(p) > 0 {
			w := 0.3 + float64(3*unit(rng))
			p[pick(len(p))].Weight = &w
			p[pick(len(p))].ResourceLimits = PartialResources{}.With(CPU, 50)
			q := &p[pick(len(p))]
			q.StrongGuaranteeResources = q.StrongGuaranteeResources.With(CPU, math.Round(q.StrongGuaranteeResources.Values[CPU]*0.5))
		}
	case 8: // tree settings
		s.Tree.EnableStepFunctionForGangOperations = !prev.Tree.EnableStepFunctionForGangOperations
		s.Tree.FairShareStarvationTolerance = 0.7
		s.Tree.EnablePoolStarvation = !prev.Tree.EnablePoolStarvation
	case 9: // fifo keys and a job's usage
		o := ops()
		for i := range o {
			if rng.IntN(20) == 0 {
				o[i].StartTime = o[i].StartTime.Add(-time.Duration(rng.IntN(100)) * time.Second)
			}
			if len(o[i].Jobs) > 0 && rng.IntN(3) == 0 {
				o[i].Jobs = slices.Clone(o[i].Jobs)
				o[i].Jobs[0].Usage = o[i].Jobs[0].Usage.Scale(2)
			}
		}
	case 10: // operations swapped, and one removed from the end
		o := ops()
		if len(o) > 2 {
			i, j := pick(len(o)), pick(len(o))
			o[i], o[j] = o[j], o[i]
			s.Operations = o[:len(o)-1]
		}
	case 0: // 30 % of the operations change usage only
		o := ops()
		for i := range o {
			if rng.IntN(10) < 3 {
				o[i].Usage = o[i].Demand.Scale(unit(rng)).Round()
			}
		}
	}
	return &s
}

// fingerprint hashes a canonical dump of every field of r.
func fingerprint(r *Result) string {
	h := sha256.New()
	dumpValue(h, reflect.ValueOf(r).Elem())
	return hex.EncodeToString(h.Sum(nil))
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	opStateListType = reflect.TypeFor[[]OperationState]()
)

// dumpValue writes v canonically: numbers in binary (floats by their bits),
// strings with their length, nil markers, maps in key order, structs field
// by field (Result's unexported lookup index skipped), times as instants.
// State.Operations is written as the map by id it was when the golden
// values were recorded: its entries in id order, each its id and then its
// time.
func dumpValue(h hash.Hash, v reflect.Value) {
	if v.Type() == opStateListType {
		ops := slices.Clone(v.Interface().([]OperationState))
		slices.SortFunc(ops, func(a, b OperationState) int { return strings.Compare(string(a.ID), string(b.ID)) })
		dumpValue(h, reflect.ValueOf(uint64(len(ops))))
		for _, o := range ops {
			dumpValue(h, reflect.ValueOf(string(o.ID)))
			dumpValue(h, reflect.ValueOf(o.BelowFairShareSince))
		}
		return
	}
	var b [8]byte
	u64 := func(x uint64) {
		binary.LittleEndian.PutUint64(b[:], x)
		h.Write(b[:])
	}
	str := func(s string) {
		u64(uint64(len(s)))
		h.Write([]byte(s))
	}
	if v.Type() == timeType {
		t := v.Interface().(time.Time)
		if t.IsZero() {
			u64(0)
			return
		}
		u64(1)
		u64(uint64(t.UnixNano()))
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			u64(1)
		} else {
			u64(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		u64(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u64(v.Uint())
	case reflect.Float32, reflect.Float64:
		u64(math.Float64bits(v.Float()))
	case reflect.String:
		str(v.String())
	case reflect.Array:
		for i := range v.Len() {
			dumpValue(h, v.Index(i))
		}
	case reflect.Slice:
		u64(uint64(v.Len()))
		for i := range v.Len() {
			dumpValue(h, v.Index(i))
		}
	case reflect.Pointer:
		if v.IsNil() {
			u64(0)
			return
		}
		u64(1)
		dumpValue(h, v.Elem())
	case reflect.Map:
		u64(uint64(v.Len()))
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			dumpValue(h, k)
			dumpValue(h, v.MapIndex(k))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			dumpValue(h, v.Field(i))
		}
	default:
		panic(fmt.Sprintf("dumpValue: unexpected kind %s", v.Kind()))
	}
}

// fingerprintRuns computes every fingerprint: for each shape, step 0 is
// the first update, steps 1.. the sequence. Update (a fresh result each
// time) and UpdateInto through one Engine into two Results used in turn
// must agree at every step; a step whose snapshot is invalid records the
// error instead.
func fingerprintRuns(t *testing.T) []string {
	var lines []string
	for _, sh := range fingerprintShapes() {
		snap, prev := genSnapshot(sh.p)
		rng := rand.New(rand.NewPCG(sh.p.Seed, 0xf1f1))
		var en Engine
		var bufs [2]Result
		prevU, prevI := prev, prev
		next := 0 // the buffer to update into (the other holds prevI)
		for k := range fingerprintSteps {
			if k > 0 {
				snap = fingerprintVary(k, snap, rng)
			}
			cur := snap
			if k == fingerprintInvalidStep && len(snap.Operations) > 0 {
				bad := *snap
				bad.Operations = slices.Clone(snap.Operations)
				bad.Operations[len(bad.Operations)/2].Demand[CPU] = -1
				cur = &bad
			}
			res := &bufs[next]
			want, differ, werr := updateBoth(&en, res, cur, prevU, prevI)
			if differ != "" {
				t.Fatalf("%s step %d: errors differ: %s", sh.name, k, differ)
			}
			if werr != nil {
				lines = append(lines, fmt.Sprintf("%s/%d error %s", sh.name, k, werr))
				continue
			}
			fu, fi := fingerprint(want), fingerprint(res)
			if fu != fi {
				t.Errorf("%s step %d: Update and UpdateInto differ: %s vs %s", sh.name, k, fu, fi)
			}
			lines = append(lines, fmt.Sprintf("%s/%d %s", sh.name, k, fu))
			prevU, prevI = &want.State, &res.State
			next = 1 - next
		}
	}
	return lines
}

// TestFingerprints checks the engine's results against the recorded ones.
func TestFingerprints(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	got := fingerprintRuns(t)
	if *updateFingerprints {
		if err := os.MkdirAll(filepath.Dir(fingerprintFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fingerprintFile, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(fingerprintFile)
	if err != nil {
		t.Fatalf("%v (record with -update)", err)
	}
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			want = append(want, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d fingerprints, golden file has %d", len(got), len(want))
	}
	bad := 0
	for i := range got {
		if got[i] != want[i] {
			bad++
			if bad <= 10 {
				t.Errorf("fingerprint %d differs:\n got  %s\n want %s", i, got[i], want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d fingerprints differ", bad, len(got))
	}
}
