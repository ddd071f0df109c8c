package scheduler

// nameIndex maps the names of a list (operation ids, pool names) to their
// index in it: an open-addressing table with a hash tag per slot, rebuilt
// every update in the table's memory. Nothing depends on its layout but
// the lookups' speed.
type nameIndex struct {
	keys  []string
	slots []nameSlot
	mask  int
	// sink keeps what hashAhead reads, so that the reads are not dropped.
	sink uint32
}

// nameSlot is one slot of a nameIndex: idx is the index plus one (0: empty)
// and tag the high half of the name's hash.
type nameSlot struct {
	tag uint32
	idx int32
}

// reset empties the index for a list of n names.
func (x *nameIndex) reset(n int) {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	if cap(x.slots) < size {
		x.slots = make([]nameSlot, size)
	} else {
		x.slots = x.slots[:size]
		clear(x.slots)
	}
	x.mask = size - 1
	clear(x.keys)
	x.keys = x.keys[:0]
}

// hashName is FNV-1a.
func hashName(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// add gives key the next index; when key is already there it adds nothing
// and returns the index it has and false.
func (x *nameIndex) add(key string) (int, bool) {
	return x.addHashed(key, hashName(key))
}

// hashAhead sets hs[k] to the hash of keys[k] (len(hs) >= len(keys)) and
// reads the first slot of each, so that the memory reads of a batch of
// keys (the keys' bytes, then their slots, in a table larger than the
// cache) overlap instead of waiting for one another; addHashed then adds
// them in order, with the slots in cache. It changes nothing in the index.
func (x *nameIndex) hashAhead(keys []string, hs []uint64) {
	hs = hs[:len(keys)]
	for k, key := range keys {
		hs[k] = hashName(key)
	}
	if len(x.slots) == 0 {
		return
	}
	sink := x.sink
	for _, h := range hs {
		sink ^= x.slots[int(h^h>>29)&x.mask].tag
	}
	x.sink = sink
}

// hashBatch sets keys and hs to the ids of the batch of ops that starts
// at b (findBatch of them, or the rest) and their hashes, read ahead (see
// hashAhead), and returns the batch.
func (x *nameIndex) hashBatch(ops []Operation, b int, keys *[findBatch]string, hs *[findBatch]uint64) []Operation {
	batch := ops[b:min(b+findBatch, len(ops))]
	for k := range batch {
		keys[k] = string(batch[k].ID)
	}
	x.hashAhead(keys[:len(batch)], hs[:])
	return batch
}

// addHashed is add for a key whose hash (hashName) is h.
func (x *nameIndex) addHashed(key string, h uint64) (int, bool) {
	tag := uint32(h >> 32)
	for i := int(h^h>>29) & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.idx == 0 {
			x.keys = append(x.keys, key)
			*s = nameSlot{tag: tag, idx: int32(len(x.keys))}
			return len(x.keys) - 1, true
		}
		if s.tag == tag && x.keys[s.idx-1] == key {
			return int(s.idx - 1), false
		}
	}
}

// find returns key's index.
func (x *nameIndex) find(key string) (int, bool) {
	if len(x.slots) == 0 {
		return 0, false
	}
	h := hashName(key)
	tag := uint32(h >> 32)
	for i := int(h^h>>29) & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.idx == 0 {
			return 0, false
		}
		if s.tag == tag && x.keys[s.idx-1] == key {
			return int(s.idx - 1), true
		}
	}
}

// findBatch is the most keys findMany looks up at once.
const findBatch = 32

// findMany sets out[k] to the index of keys[k] (len(keys) <= findBatch), or
// to -1 when it is not there. It looks the keys up in steps, each over all
// of them (their hashes and first slots, then the probes and the
// comparisons), so that the memory reads of different keys, in a table
// larger than the cache, overlap instead of waiting for one another.
func (x *nameIndex) findMany(keys []string, out []int32) {
	var tags [findBatch]uint32
	var pos [findBatch]int
	var first [findBatch]nameSlot
	if len(x.slots) == 0 {
		for k := range keys {
			out[k] = -1
		}
		return
	}
	for k, key := range keys {
		h := hashName(key)
		tags[k], pos[k] = uint32(h>>32), int(h^h>>29)&x.mask
	}
	for k := range keys {
		first[k] = x.slots[pos[k]]
	}
	for k, key := range keys {
		out[k] = -1
		s := first[k]
		for i := pos[k]; s.idx != 0; {
			if s.tag == tags[k] && x.keys[s.idx-1] == key {
				out[k] = s.idx - 1
				break
			}
			i = (i + 1) & x.mask
			s = x.slots[i]
		}
	}
}
