//go:build linux

package epolltest

import (
	"fmt"
	"net"
	"runtime"
	"strings"
	"time"

	"serverlab/tests/testkit"
)

// checkSlowConsumersMemory: a client that does not read costs the server its
// unsent output and no more, at most MaxPending. Many slow clients are each
// sent a little less than MaxPending (so none is disconnected; HighWater is
// MaxPending, so that the loop does not stop reading from them first); then
// the server's live heap must be within clients × MaxPending. A loop that
// keeps the bytes the socket has already taken in front of its output, or
// lets append grow a buffer past MaxPending, holds more: the original
// measurement was 1.7 MB per slow client against a 1 MiB limit.
func checkSlowConsumersMemory(k *testkit.T, impl Impl) {
	k.Helper()
	const clients = 50 // enough to see a per-client excess (100: 100 MB of echoes, > 5 s under -race on a loaded machine)
	const maxPending = 1 << 20
	const repeat = 4096
	srv := newEchoOn(k, impl, EchoConfig{Repeat: repeat, Limits: Limits{HighWater: maxPending, MaxPending: maxPending,
		StallTimeout: time.Hour}}, k.ListenSmall()) // none stalls out while the heap is measured
	alice := k.Dial(srv)
	var slow []net.Conn
	for range clients {
		slow = append(slow, k.DialSmall(srv.Addr))
	}
	echoTrip(k, alice, repeat, "a")
	base := liveHeap()

	// Each slow client sends lines of 6 to 8 bytes, whose replies (24 to 32
	// KiB each, with a few bytes of count) add up to more than the kernel
	// holds and less than MaxPending, so it stays connected with most of
	// them in the server.
	var requests []byte
	sent := 0
	for i := 0; ; i++ {
		line := strings.Repeat("x", 8-i%3)
		size := len(line)*repeat + 16
		if sent+size > maxPending-32<<10 {
			break
		}
		requests = append(requests, line+"\n"...)
		sent += size
	}
	for i, nc := range slow {
		nc.SetWriteDeadline(time.Now().Add(testkit.IOTimeout))
		if _, err := nc.Write(requests); err != nil {
			k.Fatalf("slow client %d: writing its requests: %v", i+1, err)
		}
	}
	echoTrip(k, alice, repeat, "a") // every slow client's requests have been read and answered
	live := liveHeap() - base
	// + 16 KiB per client of bookkeeping, and the loop's pool of output
	// buffers (4 MiB). (A correct loop measures MaxPending per client and a
	// few bytes; the obvious append path 1.14× MaxPending.)
	bound := clients*(maxPending+16<<10) + 4<<20
	k.Logf("%d slow clients, each sent %d KiB (MaxPending %d KiB): the server's live heap grew by %d KiB, "+
		"%d KiB per client", clients, sent>>10, maxPending>>10, live>>10, live/clients>>10)
	if live > bound {
		k.Fatalf("%d clients that do not read were each sent %d KiB (less than MaxPending, %d KiB; the kernel holds "+
			"at most %d KiB of it): the server's live heap grew by %d KiB, %d KiB per client, over the bound of "+
			"MaxPending per client\nhint: after a partial write, c.out = c.out[n:] keeps the sent bytes in front "+
			"of the buffer, and append grows it past what is pending: reuse the front (move the unsent bytes "+
			"there) before growing, and never grow a buffer past MaxPending (the given room does both)",
			clients, sent>>10, maxPending>>10, testkit.SmallAbsorption>>10, live>>10, live/clients>>10)
	}
}

// liveHeap is the bytes of live heap objects, after a full collection.
func liveHeap() int {
	testkit.GC()
	var m runtime.MemStats
	testkit.ReadMemStats(&m)
	return int(m.HeapAlloc)
}

// checkIdleHoldsNoBuffer: once a request that arrived in pieces is complete
// and handled, the connection gives its input buffer back. Many clients each
// send half of a line, then the rest and more lines, 60 KB in all; afterwards
// the server's live heap must be about what it was. A connection that keeps
// its input buffer (c.in = c.in[:0] instead of nil), or is given one of its
// own at accept, holds that memory for as long as it is connected, idle or
// not.
func checkIdleHoldsNoBuffer(k *testkit.T, impl Impl) {
	k.Helper()
	const clients = 100
	const lines, size = 8, 7500 // 60 KB of requests per client
	srv := newEcho(k, impl, EchoConfig{})
	bob := k.Dial(srv)
	echoTrip(k, bob, 1, "barrier")
	base := liveHeap() // before the clients connect: what they cost idle counts too
	var conns []*testkit.Conn
	for range clients {
		conns = append(conns, k.Dial(srv))
	}
	echoTrip(k, bob, 1, "barrier")
	line := strings.Repeat("y", size-1)
	stream := []byte(strings.Repeat(line+"\n", lines))
	for _, c := range conns {
		c.Write(stream[:size/2], "the first half of a line")
	}
	echoTrip(k, bob, 1, "barrier") // every first half has been read, and kept
	for i, c := range conns {
		c.Write(stream[size/2:], fmt.Sprintf("the rest of the line and %d more", lines-1))
		for j := range lines {
			if _, got, err := readEcho(c); err != nil || got != line {
				k.Fatalf("client %d, the echo of line %d of %d (%d bytes, the first sent in two parts): got %.40q…, %s%s",
					i+1, j+1, lines, size, got, testkit.Describe(err), c.Context())
			}
		}
	}
	live := liveHeap() - base
	const bound = clients*(8<<10) + 1<<20 // the clients' own buffers (4 KiB each) are in the test process too
	k.Logf("%d clients, each idle again after %d bytes of lines, the first sent in two halves: the live heap grew by %d KiB",
		clients, len(stream), live>>10)
	if live > bound {
		k.Fatalf("%d clients each sent %d bytes of lines, the first in two halves, got the answers, and are idle: the "+
			"server's live heap grew by %d KiB, %d bytes per idle connection; want next to nothing\nhint: when the "+
			"handler has consumed everything, set c.in = nil (not c.in[:0], which keeps the buffer): an idle "+
			"connection holds no buffer", clients, len(stream), live>>10, live/clients)
	}
}
