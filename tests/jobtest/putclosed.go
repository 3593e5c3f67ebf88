package jobtest

// putWaiters is how many Puts checkCloseFailsWaitingPuts has waiting: enough
// that the last of them wakes after the Get that follows Close, even when
// the queue runs in another process and every call is a round trip.
const putWaiters = 512

// checkCloseFailsWaitingPuts: a Put waiting on a full queue when Close is
// called fails, even if a Get makes room before it wakes. A Put that checks
// closed only before it waits, and after its wait asks only whether there
// is room, adds its item to a queue already closed: the server then runs a
// job after "server shutting down" was promised, or (on the loop's other
// side) a job nobody drains. Close wakes every waiting Put at once; with
// many of them, the last wake after the Get below has freed the slot.
func checkCloseFailsWaitingPuts(b bubble, impl Impl) {
	q := impl.NewQueue(1)
	defer q.Close()
	mustPut(b, q, 1, "an empty queue of capacity 1")
	puts := make([]func() bool, putWaiters)
	errs := make([]error, putWaiters)
	for i := range putWaiters {
		puts[i] = call(func() { errs[i] = q.Put(100 + i) })
	}
	settle()
	for i := range putWaiters {
		if puts[i]() {
			b.Fatalf("Put on a full queue returned (%v) without waiting", errs[i])
		}
	}
	q.Close()
	mustGet(b, q, 1, "a queue closed while full (holding 1), with Puts waiting")
	settle()
	succeeded := 0
	for i := range putWaiters {
		if !puts[i]() {
			b.Fatalf("Close did not wake every Put waiting on a full queue (%d waiting): Broadcast, not Signal", putWaiters)
		}
		if errs[i] == nil {
			succeeded++
		}
	}
	got, ok := q.Get()
	if succeeded > 0 || ok {
		b.Fatalf("%d Puts waited on a full queue of capacity 1; then Close, then Get (which freed the slot)\n"+
			"  want: every waiting Put returns an error, and the next Get returns (0, false)\n"+
			"   got: %d Puts returned nil, and the next Get returned (%d, %v)\n"+
			"hint: after its wait, Put must check closed first, not only whether there is room: a Put woken "+
			"by Close must fail even when a Get has made room since", putWaiters, succeeded, got, ok)
	}
}
