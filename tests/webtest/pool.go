package webtest

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

// held is a server whose workers can be held at gates, with a record of
// what was queued and started.
type held struct {
	srv     *testkit.Server
	site    *site
	gates   *gates
	queued  *recorder
	started *recorder
	base    int // queued events before the check's own requests
	results chan fetched
	ln      *countingListener
}

// fetched is the outcome of one asynchronous GET.
type fetched struct {
	uri  string
	resp response
	err  error
}

// startHeld starts a server whose Started hook records each URI and waits at
// the gate of the URIs in hold.
func startHeld(k *testkit.T, impl Impl, s *site, cfg Config, hold ...string) *held {
	k.Helper()
	h := &held{site: s, gates: newGates(hold...), queued: newRecorder(), started: newRecorder(),
		results: make(chan fetched, 64)}
	cfg.Root = s.root
	cfg.Queued = h.queued.add
	cfg.Started = func(uri string) {
		h.started.add(uri)
		h.gates.wait(uri)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen: %v", err)
	}
	h.ln = &countingListener{Listener: ln}
	h.srv = startServerOn(k, impl, cfg, h.gates, h.ln)
	needServer(k, h.srv, s)
	h.base = len(h.queued.waitCount(k, 1, "the Queued hook for the first request (the master must put every "+
		"connection in the buffer through admit)"))
	return h
}

// fetch sends GET uri in the background; the result arrives on h.results.
func (h *held) fetch(uri string) {
	go func() {
		resp, err := exchange(h.srv.Addr, "GET "+uri+" HTTP/1.0\r\n\r\n")
		h.results <- fetched{uri, resp, err}
	}()
}

// collect waits for n results and checks that each is its file.
func (h *held) collect(k *testkit.T, n int) {
	k.Helper()
	for range n {
		select {
		case f := <-h.results:
			if f.err != nil {
				k.Fatalf("GET %s: want the file, got %s", f.uri, describe(f.resp, f.err))
			}
			name := strings.TrimPrefix(f.uri, "/")
			if content, ok := h.site.files[name]; ok {
				expectFile(k, "GET "+f.uri, f.resp, content, typeOf(name))
			} else if strings.HasPrefix(name, "missing") {
				expectError(k, "GET "+f.uri+" (no such file)", f.resp, 404)
			} else if f.resp.status != reasons[200] {
				k.Fatalf("GET %s: want 200, got %s", f.uri, describe(f.resp, nil))
			}
		case <-time.After(testkit.IOTimeout):
			k.Fatalf("waited %v for the responses of held requests; started so far: %q", testkit.IOTimeout, h.started.list())
		}
	}
}

// after returns the events that follow the first occurrence of e.
func after(events []string, e string) []string {
	if i := slices.Index(events, e); i >= 0 {
		return events[i+1:]
	}
	return nil
}

// FIFO checks exercise 6.5: a master and a fixed pool of workers with a
// bounded buffer between them, served in arrival order, and a Close that stops
// everything.
func FIFO(t *testing.T, impl Impl) {
	k := testkit.New(t, "6.5")
	s := newSite(k)
	needResolve(k, impl, s)
	for _, name := range []string{"hold1.txt", "hold2.txt"} {
		s.write(k, name, []byte("held\n"))
	}
	check(k, "workers-busy", func(k *testkit.T) { checkWorkersBusy(k, impl, s) })
	check(k, "buffer-full", func(k *testkit.T) { checkBufferFull(k, impl, s, false) })
	check(k, "arrival-order", func(k *testkit.T) { checkArrivalOrder(k, impl, s) })
	check(k, "many-clients", func(k *testkit.T) { checkManyClients(k, impl, s) })
	check(k, "close-busy", func(k *testkit.T) { checkCloseBusy(k, impl, s) })
	check(k, "released", func(k *testkit.T) { checkReleased(k, impl, s, false) })
	k.CheckContract(contract(k, impl, s, false))
}

// contract is the server contract (testkit.CheckContract) for this server,
// under FIFO or SFF. The SFF server runs it with 4 workers that all wait on
// the queue's condition variable when Close comes: all of them must wake.
// While Close runs, one worker is busy with a CGI program (Hold), so Close
// has a connection to end and a worker to wait for, every time.
func contract(k *testkit.T, impl Impl, s *site, sff bool) testkit.Contract {
	k.Helper()
	s.cgi(k, "contract-slow.cgi")
	return testkit.Contract{
		Hold: func(k *testkit.T, addr string) {
			k.Helper()
			startSlow(k, addr, "/contract-slow.cgi") // returns once the program runs: a worker is on it
		},
		New: func(log *slog.Logger) lab.Server {
			srv, err := impl.NewServer(Config{Root: s.root, Threads: 4, Buffers: 4, SFF: sff, Logger: log})
			if err != nil {
				return brokenServer{err}
			}
			return srv
		},
		Probe: func(k *testkit.T, addr string) {
			k.Helper()
			if resp := get(k, addr, "/a.txt"); resp.status != reasons[200] {
				k.Fatalf("GET /a.txt: want 200, got %s", describe(resp, nil))
			}
		},
	}
}

// brokenServer stands for a server NewServer could not build: it fails
// every call with the reason.
type brokenServer struct{ err error }

func (b brokenServer) Serve(ln net.Listener) error { ln.Close(); return b.err }
func (b brokenServer) Close() error                { return b.err }

// checkWorkersBusy: with t workers busy, request t+1 waits.
func checkWorkersBusy(k *testkit.T, impl Impl, s *site) {
	k.Helper()
	h := startHeld(k, impl, s, Config{Threads: 2, Buffers: 4}, "/hold1.txt", "/hold2.txt")
	h.fetch("/hold1.txt")
	h.fetch("/hold2.txt")
	h.started.waitFor(k, "both workers to start (-t 2)", func(ev []string) bool {
		return contains(ev, "/hold1.txt") && contains(ev, "/hold2.txt")
	})
	h.fetch("/small.txt")
	h.queued.waitCount(k, h.base+3, "the third connection to be queued")
	if ev, ok := h.started.quiet(testkit.QuietWindow); !ok {
		k.Fatalf("-t 2 with both workers busy: a third request must wait in the buffer until a worker is free\n"+
			"  started: %q", ev)
	}
	h.gates.open("/hold1.txt")
	h.started.waitEvent(k, "/small.txt", "the waiting request to start once a worker was free")
	h.gates.open("/hold2.txt")
	h.collect(k, 3)
}

// checkBufferFull: with the buffer full the master stops accepting, under
// either policy (under SFF the master reads each request before it queues it:
// the slot must be reserved before that read, or the buffer has no bound).
func checkBufferFull(k *testkit.T, impl Impl, s *site, sff bool) {
	k.Helper()
	policy := map[bool]string{false: "-s FIFO", true: "-s SFF"}[sff]
	h := startHeld(k, impl, s, Config{Threads: 1, Buffers: 1, SFF: sff}, "/hold1.txt")
	h.fetch("/hold1.txt")
	h.started.waitEvent(k, "/hold1.txt", "the worker to start")
	h.fetch("/medium.txt")
	h.queued.waitCount(k, h.base+2, "the second connection to fill the one slot (-b 1)")
	h.fetch("/small.txt")
	if ev, ok := h.queued.quiet(testkit.QuietWindow); !ok {
		k.Fatalf("%s -t 1 -b 1, the worker busy and the one slot taken: the master must block until a slot is free, "+
			"not queue a third connection\n  queued: %d events %q", policy, len(ev), ev)
	}
	// 1 for the first request (startHeld's), 1 served, 1 in the slot: the
	// third must wait in the kernel's backlog, not in the server.
	if n := h.ln.n.Load(); n != 3 {
		k.Fatalf("%s -t 1 -b 1, the worker busy and the one slot taken: the master must reserve a slot before it "+
			"accepts (and so leave the third connection in the kernel's backlog)\n  want 3 connections accepted so far "+
			"(a first request, the busy one, the queued one), got %d", policy, n)
	}
	h.gates.open("/hold1.txt")
	ev := h.started.waitEvent(k, "/small.txt", "the third request to be served once the buffer had room")
	if got := after(ev, "/hold1.txt"); !slices.Equal(got, []string{"/medium.txt", "/small.txt"}) {
		k.Fatalf("%s -b 1: want the waiting requests served as they got the one slot [/medium.txt /small.txt], got %q",
			policy, got)
	}
	h.collect(k, 3)
}

// checkArrivalOrder: FIFO serves in arrival order, whatever the sizes.
func checkArrivalOrder(k *testkit.T, impl Impl, s *site) {
	k.Helper()
	h := startHeld(k, impl, s, Config{Threads: 1, Buffers: 8}, "/hold1.txt")
	h.fetch("/hold1.txt")
	h.started.waitEvent(k, "/hold1.txt", "the worker to start")
	order := []string{"/large.txt", "/medium.txt", "/small.txt"}
	for i, uri := range order {
		h.fetch(uri)
		h.queued.waitCount(k, h.base+2+i, "GET "+uri+" to be queued")
	}
	h.gates.open("/hold1.txt")
	ev := h.started.waitEvent(k, "/small.txt", "the queued requests to be served")
	if got := after(ev, "/hold1.txt"); !slices.Equal(got, order) {
		k.Fatalf("FIFO (-s FIFO): want requests served in arrival order %q, got %q", order, got)
	}
	h.collect(k, 4)
}

// checkManyClients: many clients at once are all served, by few workers.
func checkManyClients(k *testkit.T, impl Impl, s *site) {
	k.Helper()
	srv := startServer(k, impl, Config{Root: s.root, Threads: 4, Buffers: 8}, nil)
	names := []string{"a.txt", "small.txt", "medium.txt", "large.txt", "bin.dat", "empty.txt"}
	const clients = 48
	var wg sync.WaitGroup
	errs := make(chan string, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := names[i%len(names)]
			resp, err := exchange(srv.Addr, "GET /"+name+" HTTP/1.0\r\n\r\n")
			want := staticHeader(len(s.files[name]), typeOf(name)) + string(s.files[name])
			if err != nil || string(resp.raw) != want {
				errs <- fmt.Sprintf("GET /%s: want %s\n   got %s", name, clip([]byte(want)), describe(resp, err))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		k.Fatalf("%d clients at once, -t 4 -b 8: %s", clients, e)
	}
}

// checkCloseBusy: Close stops a server in the middle of everything: a
// running CGI program and connections waiting in the buffer.
func checkCloseBusy(k *testkit.T, impl Impl, s *site) {
	k.Helper()
	s.cgi(k, "slow.cgi")
	h := startHeld(k, impl, s, Config{Threads: 1, Buffers: 4, CGITimeout: time.Minute})
	c, r, pid := startSlow(k, h.srv.Addr, "/slow.cgi")
	h.fetch("/small.txt")
	h.fetch("/medium.txt")
	h.queued.waitCount(k, h.base+3, "two connections to be queued behind the running CGI program")
	h.srv.Close()
	if _, err := r.ReadString('\n'); err == nil {
		k.Fatalf("after Close, the connection of a running CGI program must be closed")
	}
	c.Close()
	if ok, why := reaped(pid); !ok {
		k.Fatalf("after Close returned, a CGI program that was running (pid %d) must be killed and reaped; it is %s", pid, why)
	}
	for range 2 {
		var ne net.Error
		select {
		case f := <-h.results:
			if errors.As(f.err, &ne) && ne.Timeout() {
				k.Fatalf("after Close, GET %s, waiting in the buffer, was not answered or disconnected within %v: "+
					"Close must close every connection the server has accepted, queued ones too", f.uri, testkit.IOTimeout)
			}
		case <-time.After(2 * testkit.IOTimeout):
			k.Fatalf("after Close, a connection waiting in the buffer was not closed within %v", 2*testkit.IOTimeout)
		}
	}
}

// SFF checks exercise 6.6: the master reads each request and sizes its file
// before queueing it, and workers take the smallest file first; CGI requests
// count as size 0, and equal sizes go in arrival order.
func SFF(t *testing.T, impl Impl) {
	k := testkit.New(t, "6.6")
	s := newSite(k)
	needResolve(k, impl, s)
	s.cgi(k, "env.cgi")
	holds := []string{"/hold1.txt", "/hold2.txt", "/hold3.txt", "/hold4.txt", "/hold5.txt"}
	for _, uri := range holds {
		s.write(k, uri[1:], []byte("held\n"))
	}
	// Equal sizes in an arrival order drawn afresh each run. Five or more
	// equal keys are enough for a heap without a tie-break to lose their
	// order: container/heap is not stable.
	var ties []string
	for _, i := range k.Rand().Perm(6) {
		name := fmt.Sprintf("tie-%d.txt", i)
		s.write(k, name, []byte("same size"))
		ties = append(ties, "/"+name)
	}
	sized := s.sized(k, 20)
	h := startHeld(k, impl, s, Config{Threads: 1, Buffers: 32, SFF: true}, holds...)
	if ev := h.queued.list(); !contains(ev, "/a.txt") {
		k.Fatalf("-s SFF: the master must read each request before queueing it, and call Queued with its URI\n"+
			"  after GET /a.txt, Queued was called with %q", ev)
	}

	round := func(hold string, uris []string, want []string, what string) {
		k.Helper()
		sffRound(k, h, hold, uris, want, "-s SFF -t 1, "+what)
	}
	round("/hold1.txt", []string{"/large.txt", "/medium.txt", "/small.txt"},
		[]string{"/small.txt", "/medium.txt", "/large.txt"}, "smallest file first")

	var queued, want []string
	for _, name := range sized {
		queued = append(queued, "/"+name)
	}
	want = slices.Clone(queued)
	slices.SortFunc(want, func(a, b string) int { return len(s.files[a[1:]]) - len(s.files[b[1:]]) })
	round("/hold2.txt", queued, want, fmt.Sprintf("%d files of different sizes", len(queued)))

	round("/hold3.txt", ties, ties, fmt.Sprintf("%d files of the same size: in arrival order (break ties by seq)", len(ties)))
	round("/hold4.txt", []string{"/large.txt", "/env.cgi?x", "/small.txt"},
		[]string{"/env.cgi?x", "/small.txt", "/large.txt"}, "a CGI request counts as size 0")
	round("/hold5.txt", []string{"/large.txt", "/missing.txt", "/small.txt"},
		[]string{"/missing.txt", "/small.txt", "/large.txt"}, "a request that fails (404: no such file) is "+
			"answered with a short error page: it counts as size 0, and the round goes on")
	check(k, "ageing", func(k *testkit.T) { checkAgeing(k, impl, s) })
	check(k, "ageing-rate", func(k *testkit.T) { checkAgeingRate(k, impl, s) })
	check(k, "buffer-full", func(k *testkit.T) { checkBufferFull(k, impl, s, true) })
	k.CheckContract(contract(k, impl, s, true))
}

// sffRound holds the one worker on hold, queues uris one after the other
// (each is in the buffer before the next is sent), then lets the worker go:
// it must serve them in the order want.
func sffRound(k *testkit.T, h *held, hold string, uris, want []string, what string) {
	k.Helper()
	sffRoundPaused(k, h, hold, uris, 0, want, what)
}

// sffRoundPaused is sffRound with a pause once the first of uris is queued:
// the time the ageing checks let it wait before the others arrive.
func sffRoundPaused(k *testkit.T, h *held, hold string, uris []string, pause time.Duration, want []string, what string) {
	k.Helper()
	h.fetch(hold)
	h.started.waitEvent(k, hold, "the worker to start "+hold)
	// The server calls Queued after it has put the job into the buffer, so
	// the worker may start hold before hold's Queued call is recorded: wait
	// for it, so that the requests below are queued after it.
	h.queued.waitEvent(k, hold, "the Queued hook for "+hold)
	for _, uri := range uris {
		h.fetch(uri)
		// Queued in this round: an earlier round queued some of the same
		// files, and an old event must not open the gate before this
		// round's requests are all in the queue.
		h.queued.waitFor(k, "GET "+uri+" to be queued", func(ev []string) bool {
			return contains(after(ev, hold), uri)
		})
		if uri == uris[0] && pause > 0 {
			// Not a synchronisation: the time that passes is what the
			// ageing check measures.
			time.Sleep(pause)
		}
	}
	h.gates.open(hold)
	ev := h.started.waitFor(k, "the queued requests to be served", func(ev []string) bool {
		return len(after(ev, hold)) >= len(uris)
	})
	if got := after(ev, hold)[:len(uris)]; !slices.Equal(got, want) {
		k.Fatalf("%s\n  queued in the order %q\n  want them served as %q\n   got %q", what, uris, want, got)
	}
	h.collect(k, 1+len(uris))
}

// checkAgeing: with ageing (Config.AgeRate), a request is forgiven AgeRate
// bytes of size for every second it has waited, so its key is size + AgeRate
// × arrival time. With a rate so large that a microsecond of arrival outweighs
// any file here, SFF serves in arrival order; a scheduler that ignores the
// rate (or subtracts the arrival time) serves the smallest (or the latest)
// first.
func checkAgeing(k *testkit.T, impl Impl, s *site) {
	k.Helper()
	const rate = 1e13 // bytes per second: 10 MB per microsecond
	h := startHeld(k, impl, s, Config{Threads: 1, Buffers: 32, SFF: true, AgeRate: rate}, "/hold1.txt")
	uris := []string{"/large.txt", "/medium.txt", "/small.txt", "/a.txt"}
	sffRound(k, h, "/hold1.txt", uris, uris, fmt.Sprintf("-s SFF -t 1 -age %g (a request forgiven %g bytes per "+
		"second it waits: key = size + AgeRate × arrival time, so a huge rate is FIFO)", rate, rate))
}
