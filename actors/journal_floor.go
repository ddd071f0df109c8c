package actors

// journalFloor tracks which batches of the completions journal still hold
// a completion that no stored status has. An operation numbers the
// completions it journals (1, 2, …); after a status write is stored it
// reports the highest number the write's snapshot covers, and the batches
// whose completions of that operation all have numbers up to it are no
// longer needed for it. A batch is needed while one operation needs it;
// the journal drops the batches below the lowest one needed.
//
// It relies on the order of its inputs (see journalWriter): an operation's
// completions are noted before the report that covers them.
type journalFloor struct {
	// ops are the operations with completions that no stored status has:
	// the batches holding them, in order, each with the highest number
	// of the operation's completions in it.
	ops map[string][]journalMark
}

// journalMark is one batch an operation needs, and the highest number of
// the operation's completions in it.
type journalMark struct {
	seq, idx uint64
}

// note records that batch seq holds the operation's completion number idx.
// Number 0 stands for completions found in the journal at start, which
// any status the operation stores after covers.
func (f *journalFloor) note(op string, seq, idx uint64) {
	if f.ops == nil {
		f.ops = map[string][]journalMark{}
	}
	marks := f.ops[op]
	if n := len(marks); n > 0 && marks[n-1].seq == seq {
		marks[n-1].idx = max(marks[n-1].idx, idx)
		return
	}
	f.ops[op] = append(marks, journalMark{seq: seq, idx: idx})
}

// covered records that a stored status of the operation has its
// completions numbered up to idx.
func (f *journalFloor) covered(op string, idx uint64) {
	marks := f.ops[op]
	i := 0
	for i < len(marks) && marks[i].idx <= idx {
		i++
	}
	if i == len(marks) {
		delete(f.ops, op)
		return
	}
	f.ops[op] = marks[i:]
}

// drop forgets an operation that is over (its final status is stored) or
// was not revived: none of its completions is needed any more.
func (f *journalFloor) drop(op string) { delete(f.ops, op) }

// floor is the lowest batch still needed; next (one past the last batch)
// when none is.
func (f *journalFloor) floor(next uint64) uint64 {
	low := next
	for _, marks := range f.ops {
		low = min(low, marks[0].seq)
	}
	return low
}

// needing is how many operations still need a batch.
func (f *journalFloor) needing() int { return len(f.ops) }
