package placement

// The candidate heap of a pool: a binary min-heap of children ordered by
// before(pool.mode, ·, ·), each child knowing its index in pos.

func (pool *element) less(i, j int) bool {
	return before(pool.mode, pool.heap[i], pool.heap[j])
}

func (pool *element) swap(i, j int) {
	h := pool.heap
	h[i], h[j] = h[j], h[i]
	h[i].pos = i
	h[j].pos = j
}

func (pool *element) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !pool.less(i, p) {
			return
		}
		pool.swap(i, p)
		i = p
	}
}

// down sifts i down and reports whether it moved.
func (pool *element) down(i int) bool {
	start, n := i, len(pool.heap)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && pool.less(r, l) {
			m = r
		}
		if !pool.less(m, i) {
			break
		}
		pool.swap(i, m)
		i = m
	}
	return i > start
}

func (pool *element) push(c *element) {
	c.pos = len(pool.heap)
	pool.heap = append(pool.heap, c)
	pool.up(c.pos)
}

func (pool *element) remove(c *element) {
	i, last := c.pos, len(pool.heap)-1
	if i != last {
		pool.swap(i, last)
	}
	pool.heap[last] = nil
	pool.heap = pool.heap[:last]
	c.pos = -1
	if i != last {
		pool.fix(i)
	}
}

func (pool *element) fix(i int) {
	if !pool.down(i) {
		pool.up(i)
	}
}

// heapify restores the heap order after many keys changed.
func (pool *element) heapify() {
	for i, c := range pool.heap {
		c.pos = i
	}
	for i := len(pool.heap)/2 - 1; i >= 0; i-- {
		pool.down(i)
	}
}

// recomputeMin sets minPending from the candidates' contributions.
func (pool *element) recomputeMin() {
	m := unlimitedVec
	for _, c := range pool.heap {
		m = m.min(c.contrib)
	}
	pool.minPending = m
}
