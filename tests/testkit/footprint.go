package testkit

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Footprint is what the process that runs the code under test holds at one
// moment: the goroutines that run the server's code, its open file
// descriptors, and its live heap after a collection.
type Footprint struct {
	Goroutines int
	FDs        int // -1 where /proc cannot be read
	Heap       uint64
}

func (f Footprint) String() string {
	return fmt.Sprintf("%d goroutines of the server, %d open descriptors, %d KiB of live heap",
		f.Goroutines, f.FDs, f.Heap>>10)
}

// ReadFootprint measures the footprint now (two collections first, so that
// what is garbage, sync.Pool's victims included, is gone).
func ReadFootprint() Footprint {
	GC()
	GC()
	var m runtime.MemStats
	ReadMemStats(&m)
	fds := -1
	if ents, err := os.ReadDir(ServerProc() + "/fd"); err == nil {
		fds = len(ents)
	}
	return Footprint{Goroutines: len(serverGoroutinesNow(nil)), FDs: fds, Heap: m.HeapAlloc}
}

// Released is the limit CheckReleased allows: per round, the live heap a
// round may leave (bookkeeping that grows by less than that per connection
// is not what the check is after); and a slack for the heap's noise.
type Released struct {
	HeapPerRound uint64
	HeapSlack    uint64
}

// CheckReleased checks that a server releases what it keeps per request or
// per connection: rounds calls round(i), for i in [0, rounds), each a
// complete exchange on a connection of its own that the client then closes.
// Once they are done the server must return to the footprint it had before
// them: as many goroutines and descriptors (within IOTimeout: a connection's
// goroutines end a moment after its client has gone), and a heap at most
// rounds × HeapPerRound + HeapSlack larger. A server that forgets a
// connection in a map, keeps a goroutine per finished connection or leaves a
// descriptor open grows with every request and runs out in the end. what
// describes the rounds for the failure message.
func (k *T) CheckReleased(what string, rounds int, lim Released, round func(i int)) {
	k.Helper()
	round(-1) // a first round, so that pools and maps have their working size
	before := ReadFootprint()
	for i := range rounds {
		round(i)
	}
	deadline := time.Now().Add(IOTimeout)
	after := ReadFootprint()
	for (after.Goroutines > before.Goroutines || after.FDs > before.FDs) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // polling the subject's state, which has no event to wait for
		after = ReadFootprint()
	}
	grew := func() string {
		return fmt.Sprintf("%s, %d finished\n  before: %v\n   after: %v", what, rounds, before, after)
	}
	if after.Goroutines > before.Goroutines {
		k.Fatalf("%s\n  want every goroutine of a finished connection gone (within %v)\n%s", grew(), IOTimeout,
			serverStacksSummary())
	}
	if after.FDs > before.FDs {
		k.Fatalf("%s\n  want every descriptor of a finished request closed (within %v): %d stayed open",
			grew(), IOTimeout, after.FDs-before.FDs)
	}
	if allowed := before.Heap + uint64(rounds)*lim.HeapPerRound + lim.HeapSlack; after.Heap > allowed {
		k.Fatalf("%s\n  want the live heap back near where it was (at most %d bytes more per request)\n"+
			"   got %d bytes more per request: the server keeps something for every finished connection "+
			"(an entry in a map or a list that is never deleted)", grew(), lim.HeapPerRound,
			(after.Heap-before.Heap)/uint64(rounds))
	}
}

// serverStacksSummary lists where the server's goroutines are, for a
// message.
func serverStacksSummary() string {
	out := "  the server's goroutines now:"
	counts := map[string]int{}
	var order []string
	for _, desc := range serverGoroutinesNow(nil) {
		_, fn, _ := strings.Cut(desc, " in ")
		if counts[fn] == 0 {
			order = append(order, fn)
		}
		counts[fn]++
	}
	slices.Sort(order)
	for _, fn := range order {
		out += fmt.Sprintf("\n    %d in %s", counts[fn], fn)
	}
	return out
}
