package actors

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJournalFloor(t *testing.T) {
	type step struct {
		do      string // note, covered, drop
		op      string
		seq     uint64
		idx     uint64
		floor   uint64 // with next = 100
		needing int
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"nothing needed: everything below next", []step{
			{do: "covered", op: "a", idx: 3, floor: 100},
		}},
		{"a batch is needed until a write covers its completions", []step{
			{do: "note", op: "a", seq: 5, idx: 1, floor: 5, needing: 1},
			{do: "note", op: "a", seq: 7, idx: 2, floor: 5, needing: 1},
			{do: "covered", op: "a", idx: 1, floor: 7, needing: 1},
			{do: "covered", op: "a", idx: 2, floor: 100},
		}},
		{"the lowest needed batch of any operation", []step{
			{do: "note", op: "a", seq: 5, idx: 1, floor: 5, needing: 1},
			{do: "note", op: "b", seq: 5, idx: 1, floor: 5, needing: 2},
			{do: "note", op: "b", seq: 6, idx: 2, floor: 5, needing: 2},
			{do: "covered", op: "a", idx: 1, floor: 5, needing: 1},
			{do: "covered", op: "b", idx: 1, floor: 6, needing: 1},
			{do: "drop", op: "b", floor: 100},
		}},
		{"completions of one batch: the highest number counts", []step{
			{do: "note", op: "a", seq: 5, idx: 1, floor: 5, needing: 1},
			{do: "note", op: "a", seq: 5, idx: 2, floor: 5, needing: 1},
			{do: "covered", op: "a", idx: 1, floor: 5, needing: 1},
			{do: "covered", op: "a", idx: 2, floor: 100},
		}},
		{"found at start (number 0): any write covers them", []step{
			{do: "note", op: "a", seq: 2, floor: 2, needing: 1},
			{do: "note", op: "a", seq: 9, idx: 1, floor: 2, needing: 1},
			{do: "covered", op: "a", idx: 0, floor: 9, needing: 1},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f journalFloor
			for i, s := range tc.steps {
				switch s.do {
				case "note":
					f.note(s.op, s.seq, s.idx)
				case "covered":
					f.covered(s.op, s.idx)
				case "drop":
					f.drop(s.op)
				}
				got := []any{f.floor(100), f.needing()}
				if diff := cmp.Diff([]any{s.floor, s.needing}, got); diff != "" {
					t.Errorf("after step %d (%s %s): floor, needing (-want +got):\n%s", i, s.do, s.op, diff)
				}
			}
		})
	}
}
