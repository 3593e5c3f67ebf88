package jobtest

// putWaiters is how many Puts checkCloseFailsWaitingPuts has waiting, in
// each of putRounds rounds: many, so that the last of them may wake after
// the Get that follows Close even when the queue runs in another process
// and every call is a round trip (there, about one round in two does).
const putWaiters, putRounds = 256, 8

// checkCloseFailsWaitingPuts: a Put waiting on a full queue when Close is
// called fails, even if a Get makes room before it wakes. A Put that checks
// closed only before it waits, and after its wait asks only whether there
// is room, adds its item to a queue already closed: a consumer may have
// found the queue closed and empty already, and the item then waits for
// nobody (in the server, a request accepted after Close began). Close wakes
// every waiting Put at once; with many of them, some wake only after the Get
// that follows Close has freed the slot.
func checkCloseFailsWaitingPuts(b bubble, impl Impl) {
	for round := range putRounds {
		closeFailsWaitingPuts(b, impl, round)
	}
}

func closeFailsWaitingPuts(b bubble, impl Impl, round int) {
	b.Helper()
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
		b.Fatalf("round %d of %d: %d Puts waited on a full queue of capacity 1; then Close, then Get (which "+
			"freed the slot)\n"+
			"  want: every waiting Put returns an error, and the next Get returns (0, false)\n"+
			"   got: %d Puts returned nil, and the next Get returned (%d, %v)\n"+
			"hint: after its wait, Put must check closed first, not only whether there is room: a Put woken "+
			"by Close must fail even when a Get has made room since", round+1, putRounds, putWaiters, succeeded, got, ok)
	}
}
