package actors

import "time"

// persistState offers the writer the state of the update at now, at most
// once per StatePersistPeriod (the first update's always).
func (t *treeActor) persistState(now time.Time) {
	if !t.lastState.IsZero() && now.Sub(t.lastState) < t.cfg.StatePersistPeriod {
		return
	}
	t.lastState = now
	t.writer.offer(treeStateOf(t.spec.Name, now, &t.state))
}

// closeState hands the writer the latest update's state, to be written
// last, and closes it. A tree that never updated writes nothing: its
// state is what it was started with.
func (t *treeActor) closeState() {
	if t.updates == 0 {
		t.writer.close(nil)
		return
	}
	t.writer.close(treeStateOf(t.spec.Name, t.state.LastUpdate, &t.state))
}
