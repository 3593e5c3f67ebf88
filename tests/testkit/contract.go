package testkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"serverlab/tests/judge"
	"serverlab/tools/given/lab"
)

// Contract describes a server to CheckContract: how to build a fresh one, and
// the smallest exchange that proves it is serving.
type Contract struct {
	// New builds a fresh, unstarted server that logs to log. A server should
	// log (at any level, Debug included) when a connection ends: the check
	// slows that log down to prove that Close waits for the goroutine doing it.
	New func(log *slog.Logger) lab.Server
	// Probe dials addr and makes one exchange that a serving server answers,
	// failing k (Fatalf) if it does not.
	Probe func(k *T, addr string)
	// Hold, if set, dials addr and leaves a connection open that the server is
	// serving (e.g. logged in), so that Close has a connection goroutine to stop
	// and wait for. Without it, the check holds a plain idle connection.
	Hold func(k *T, addr string)
	// SeveralListeners says the server serves every listener it is given
	// (chapter 03's job server): a second Serve serves too, and Close ends
	// both. Otherwise a second Serve is refused (second-serve).
	SeveralListeners bool
}

// CheckContract checks the face every server in the course has (docs/servers.md),
// each rule as a named subtest:
//
//   - nothing-before-serve: building a server starts no goroutine, and Close
//     before Serve returns nil;
//   - serve-after-close: Serve after Close returns lab.ErrServerClosed at once;
//   - second-serve: a Serve while one serves returns lab.ErrServerClosed at
//     once and closes its listener; the first serves on, and Close ends it
//     (contract_second.go);
//   - close-after-close: a Close after one that has returned, on a server
//     that served, returns nil at once (the first one's end leaves no lock
//     held and closes nothing twice);
//   - close-waits: two Close calls that race both return nil, and neither
//     returns while a goroutine of the server is still running — not even one
//     that is busy ending a connection;
//   - close-waits-for-a-close-under-way: the same, the second call made
//     while the first is certainly under way (held in the listener's Close);
//   - accept-errors-retried: Accept failing with EMFILE, ENFILE (four times
//     in a row: a full file table lasts) or ECONNABORTED does not end Serve;
//     the server goes on serving.
func (k *T) CheckContract(c Contract) {
	k.Helper()
	k.Run("nothing-before-serve", func(t *testing.T) { checkNothingBeforeServe(New(t, k.exercise), c) })
	k.Run("serve-after-close", func(t *testing.T) {
		sk := New(t, k.exercise)
		sk.CheckServeAfterClose(c.New(Logger()))
	})
	k.Run("second-serve", func(t *testing.T) { checkSecondServe(New(t, k.exercise), c) })
	k.Run("close-after-close", func(t *testing.T) { checkCloseAfterClose(New(t, k.exercise), c) })
	k.Run("close-waits", func(t *testing.T) { checkCloseWaits(New(t, k.exercise), c, false) })
	k.Run("close-waits-for-a-close-under-way", func(t *testing.T) { checkCloseWaits(New(t, k.exercise), c, true) })
	k.Run("accept-errors-retried", func(t *testing.T) { checkAcceptRetried(New(t, k.exercise), c) })
}

func checkCloseAfterClose(k *T, c Contract) {
	srv := c.New(Logger())
	s := k.Serve(srv)
	c.Probe(k, s.Addr)
	s.Close() // the first: checks that Serve returned lab.ErrServerClosed
	if err := closeWithin(srv); err != nil {
		k.Fatalf("a server served one exchange and was closed; Close was then called again\n  want: nil, at once "+
			"(Close is idempotent)\n   got: %v\nhint: the first Close, or the end of Serve, left something the next "+
			"call waits for: a mutex still locked, a channel closed twice, a WaitGroup gone negative", err)
	}
}

func checkNothingBeforeServe(k *T, c Contract) {
	log := Logger()
	before := goroutineIDs()
	srv := c.New(log)
	extra := serverGoroutines(before)
	if extra == "" {
		extra = startedHere(before)
	}
	if extra != "" {
		srv.Close()
		k.Fatalf("building the server started goroutines before Serve was called:\n%s\n"+
			"hint: start workers and loops in Serve, not in the constructor: a server that is never "+
			"served must not leave anything running (and Close then has nothing to wait for)", extra)
	}
	if err := closeWithin(srv); err != nil {
		k.Fatalf("Close before Serve: %v; want nil", err)
	}
	if extra := serverGoroutines(before); extra != "" {
		k.Fatalf("after Close (never served), goroutines of the server are running:\n%s", extra)
	}
}

// checkCloseWaits: two Close calls, started together or, with hold, the
// second while the first is held in the listener's Close. Each catches what
// the other may miss. Started together, both calls may pass a bare `if
// closed` before either sets it, and then both wait. Held, a server that
// closes its listener under its own mutex holds the second call back on
// that mutex until the first is nearly done (chapter 05's loop does), and a
// second call that returns at once then returns with it.
func checkCloseWaits(k *T, c Contract, hold bool) {
	log, slow := slowLogger()
	before := goroutineIDs()
	srv := c.New(log)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	held := newFaultyListener(ln)
	if hold {
		held.hold = make(chan struct{})
	}
	s := k.ServeListener(srv, held)
	// After ServeListener's: these run first, before its Close.
	k.OnAbort(held.releaseHold)
	k.Cleanup(held.releaseHold)
	c.Probe(k, s.Addr)
	if c.Hold != nil {
		c.Hold(k, s.Addr)
	} else {
		k.DialAddr(s.Addr)
	}
	slow.Store(true) // from now on every log line takes slowLog: ending a connection is slow
	type result struct {
		err   error
		extra string
	}
	results := make(chan result, 2)
	startClose := func() {
		go func() {
			err := srv.Close()
			results <- result{err, serverGoroutines(before)} // looked at the moment Close returns
		}()
	}
	var got []result
	startClose()
	if hold { // the hold ends when a call returns or after closeHold
		select {
		case <-held.closed:
		case <-time.After(IOTimeout):
		}
		startClose()
		select {
		case r := <-results:
			got = append(got, r)
		case <-time.After(closeHold()):
		}
		held.releaseHold()
	} else {
		startClose()
	}
	for len(got) < 2 {
		select {
		case r := <-results:
			got = append(got, r)
		case <-time.After(IOTimeout + 2*slowLog):
			k.Fatalf("Close did not return within %v (two calls racing): it must close the listener "+
				"and every connection, then wait for the goroutines it started", IOTimeout)
		}
	}
	for i, r := range got {
		if r.err != nil {
			k.Errorf("Close call %d of 2 (racing) returned %v; want nil (Close is idempotent)", i+1, r.err)
		}
		if r.extra != "" {
			k.Errorf("a Close call returned while goroutines of the server were still running:\n%s\n"+
				"hint: every call of Close must wait for every goroutine the server started "+
				"(a sync.WaitGroup), also the second call: sync.Once makes later callers wait for "+
				"the first; a bare `if closed { return nil }` does not", r.extra)
		}
	}
}

// closeHold is how long checkCloseWaits holds the first Close in the
// listener's Close while a second call starts: long beside one call across
// the judge's socket, and longer on a busy machine (IOTimeout grows).
func closeHold() time.Duration { return IOTimeout / 20 }

func checkAcceptRetried(k *T, c Contract) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	// ENFILE lasts: the system's file table stays full for a while, and a
	// server that retries once and then gives up stops serving.
	faulty := newFaultyListener(ln, syscall.EMFILE, syscall.ENFILE, syscall.ENFILE, syscall.ENFILE, syscall.ENFILE,
		syscall.ECONNABORTED)
	s := k.ServeListener(c.New(Logger()), faulty)
	if stalled := baitFaults(faulty); stalled {
		if _, stopped := s.Stopped(); !stopped && faulty.seen() == "" {
			k.Fatalf("a client waited %v and the server never called Accept on the listener it was given: "+
				"Serve must accept on ln (or, on the socket itself, ask AcceptFault first)", IOTimeout)
		} else if !stopped {
			k.Fatalf("after accept failed with %v, a client waited %v and the server accepted nothing: it "+
				"stopped accepting. These errors pass (the process is out of file descriptors, or a client gave "+
				"up in the backlog): accept again, after a pause (lab.Accept) or once an fd is free", faulty.seen(),
				IOTimeout)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Probe(k, s.Addr)
	}()
	select {
	case <-done:
	case <-time.After(IOTimeout + 2*time.Second):
		k.Fatalf("after Accept failed with EMFILE, ENFILE four times in a row and ECONNABORTED, the server did not answer "+
			"within %v", IOTimeout)
	}
	if err, stopped := s.Stopped(); stopped && faulty.seen() == "" {
		k.Fatalf("Serve returned %s without ever calling Accept on the listener it was given (sent: a client; "+
			"expected: an answer): Serve must accept on ln, and keep accepting until Close", errString(err))
	} else if stopped {
		k.Fatalf("Serve returned %s after Accept failed with %v: these errors pass (the process is out of "+
			"file descriptors, or a client gave up in the backlog); wait a little and accept again, "+
			"as lab.Accept does", errString(err), faulty.seen())
	}
}

// CheckAcceptFailureEndsServe serves srv (fresh, not yet served) on a
// listener whose first Accept fails with EINVAL, the error of a listening
// socket that was shut down: nothing will ever be accepted on it again, so
// Serve must return that error (not nil, not lab.ErrServerClosed: nobody
// called Close), and Close must still return nil. A loop that handles only
// the errors it expects (lab.ErrServerClosed) and goes on with the rest
// hands a nil connection to its handler — a panic — or, if it guards that,
// spins on the dead listener for ever. It is not part of CheckContract:
// chapters call it where their Serve is an exercise of its own.
func (k *T) CheckAcceptFailureEndsServe(srv lab.Server) {
	k.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	defer ln.Close()
	faulty := newFaultyListener(ln, syscall.EINVAL)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(faulty) }()
	k.OnAbort(func() { srv.Close(); ln.Close() })
	select {
	case err := <-served:
		if err == nil || errors.Is(err, lab.ErrServerClosed) {
			k.Fatalf("sent: nothing (the listener's Accept failed with %v, which no retry cures)\n"+
				"expected: Serve returns that error\n     got: Serve returned %s\n"+
				"likely cause: Serve says lab.ErrServerClosed (or nil) for every failed Accept; only after Close is "+
				"that true", faulty.seen(), errString(err))
		}
	case <-time.After(IOTimeout):
		k.Fatalf("sent: nothing (the listener's Accept failed with %v, which no retry cures)\n"+
			"expected: Serve returns that error\n     got: Serve had not returned after %v\n"+
			"likely cause: the accept loop goes on after an error lab.Accept did not retry (it retries only the "+
			"ones that pass: EMFILE, ENFILE, ENOBUFS, ENOMEM, ECONNABORTED); return it", faulty.seen(), IOTimeout)
	}
	if err := closeWithin(srv); err != nil {
		k.Fatalf("after Serve returned because Accept failed: %v; want Close to return nil at once", err)
	}
}

// baitFaults makes sure the server has met every fault before the probe. A
// server that calls Accept meets them at once, with no client waiting. One
// that accepts on the socket itself (chapter 05's event loop, through
// AcceptFault) tries accept4 only when epoll says a client is waiting, and may
// refuse that client: out of file descriptors, the loop accepts one and closes
// it at once, so that its listener stops reporting a queue it cannot serve.
// So, while faults are left, a bait connection is dialled, and closed once the
// server has taken the next fault (a closed bait costs a server that accepts
// it one read of end of file). It reports whether the server took no fault
// while a bait waited IOTimeout; a server that stopped takes none either, and
// the probe then says so.
func baitFaults(faulty *faultyListener) (stalled bool) {
	for faulty.left() > 0 {
		bait, err := net.DialTimeout("tcp", faulty.Addr().String(), IOTimeout)
		if err != nil {
			return false
		}
		select {
		case <-faulty.taken:
			bait.Close()
		case <-faulty.closed:
			bait.Close()
			return false
		case <-time.After(IOTimeout):
			bait.Close()
			return true
		}
	}
	return false
}

// faultyListener fails its first accepts with the given errors, then accepts
// as ln does: the first calls of Accept, for a server that calls it, or of
// AcceptFault, for one that accepts on the socket itself.
type faultyListener struct {
	net.Listener
	taken     chan struct{} // a token for each fault taken
	closed    chan struct{} // closed by Close
	closeOnce sync.Once
	hold      chan struct{} // if set, the first Close waits for releaseHold
	holdOnce  sync.Once

	mu     sync.Mutex
	faults []syscall.Errno
	failed []string
}

func newFaultyListener(ln net.Listener, faults ...syscall.Errno) *faultyListener {
	return &faultyListener{Listener: ln, faults: faults, taken: make(chan struct{}, len(faults)),
		closed: make(chan struct{})}
}

func (l *faultyListener) Accept() (net.Conn, error) {
	if errno := l.next(); errno != 0 {
		return nil, acceptError(errno)
	}
	return l.Listener.Accept()
}

// AcceptFault is the fault seam at the level of the socket, for a server
// that accepts with accept4 on the listener's descriptor (SyscallConn):
// called before each accept4, it returns the error that accept4 is to fail
// with, or nil for a real accept4. Chapter 05's event loop asks every listener
// that has this method.
func (l *faultyListener) AcceptFault() error {
	if errno := l.next(); errno != 0 {
		return errno
	}
	return nil
}

// next takes the next fault, 0 if none is left.
func (l *faultyListener) next() syscall.Errno {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.faults) == 0 {
		return 0
	}
	errno := l.faults[0]
	l.faults = l.faults[1:]
	l.failed = append(l.failed, "accept4: "+errno.Error())
	l.taken <- struct{}{} // buffered for every fault: never blocks
	return errno
}

// left is the number of faults not yet taken.
func (l *faultyListener) left() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.faults)
}

func (l *faultyListener) Close() error {
	l.closeOnce.Do(func() {
		close(l.closed)
		if l.hold != nil {
			<-l.hold
		}
	})
	return l.Listener.Close()
}

// releaseHold lets a held Close go on (once; harmless without a hold).
func (l *faultyListener) releaseHold() {
	l.holdOnce.Do(func() {
		if l.hold != nil {
			close(l.hold)
		}
	})
}

// SyscallConn hands out the socket of the listener underneath, for a server
// that accepts on the socket itself (chapter 05's event loop): it meets the
// faults through AcceptFault.
func (l *faultyListener) SyscallConn() (syscall.RawConn, error) {
	sc, ok := l.Listener.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("%T has no socket", l.Listener)
	}
	return sc.SyscallConn()
}

func (l *faultyListener) seen() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.failed, ", ")
}

// acceptError is the error net.TCPListener.Accept returns when accept4 fails
// with errno.
func acceptError(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

func closeWithin(srv lab.Server) error {
	done := make(chan error, 1)
	go func() { done <- srv.Close() }()
	select {
	case err := <-done:
		return err
	case <-time.After(IOTimeout):
		return fmt.Errorf("Close did not return within %v", IOTimeout)
	}
}

// slowLog is how long each log line takes once the slow logger is armed: long
// beside the microseconds a goroutine needs to finish, so a Close that does not
// wait is caught every time, short enough to keep the check fast. exitGrace,
// well under it, is how long serverGoroutines forgives a goroutine that is
// merely returning.
const (
	slowLog   = 100 * time.Millisecond
	exitGrace = 20 * time.Millisecond
)

// slowLogger returns a logger that accepts every level and, once armed, takes
// slowLog for each line.
func slowLogger() (*slog.Logger, *atomic.Bool) {
	h := &slowHandler{armed: new(atomic.Bool)}
	return slog.New(h), h.armed
}

type slowHandler struct{ armed *atomic.Bool }

func (h *slowHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *slowHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *slowHandler) WithGroup(string) slog.Handler            { return h }
func (h *slowHandler) Handle(context.Context, slog.Record) error {
	if h.armed.Load() {
		time.Sleep(slowLog) // fault injection: a slow log sink, not synchronisation
	}
	return nil
}

// GoroutineMark is the set of goroutines running at one moment
// (MarkGoroutines), for a check that asks later which of the server's
// goroutines have started since and still run.
type GoroutineMark struct{ ids map[int]bool }

// MarkGoroutines marks the goroutines running now (in the subject, under
// tools/cmd/grade).
func MarkGoroutines() GoroutineMark { return GoroutineMark{goroutineIDs()} }

// ServerGoroutines describes the goroutines running the server's code that
// started since m and still run after a moment's grace for those on their
// way out; "" if none. Called as a Close returns, it says whether that Close
// waited for everything the server started.
func (m GoroutineMark) ServerGoroutines() string { return serverGoroutines(m.ids) }

// goroutineIDs returns the ids of the goroutines running now.
func goroutineIDs() map[int]bool {
	ids := map[int]bool{}
	for _, g := range Goroutines() {
		ids[g.ID] = true
	}
	return ids
}

// Goroutine is one goroutine as runtime.Stack shows it.
type Goroutine struct {
	ID    int
	State string   // "chan receive", "runnable", "sync.Mutex.Lock", … (without the minutes)
	Stack string   // its whole block of the dump
	Funcs []string // the functions on its stack, innermost first
	// CreatedBy is the function whose go statement started it, and CreatedIn
	// the goroutine that ran it ("" and 0 for the main goroutine).
	CreatedBy string
	CreatedIn int
}

// Goroutines returns every goroutine running now, from runtime.Stack: what a
// check looks at to see where a server's goroutines are, or whether they are
// parked.
func Goroutines() []Goroutine {
	buf := []byte(allStacks())
	var gs []Goroutine
	for _, block := range bytes.Split(buf, []byte("\n\n")) {
		lines := strings.Split(strings.TrimSpace(string(block)), "\n")
		head, ok := strings.CutPrefix(lines[0], "goroutine ")
		if !ok {
			continue
		}
		idText, _, _ := strings.Cut(head, " ")
		id, err := strconv.Atoi(idText)
		if err != nil {
			continue
		}
		_, state, _ := strings.Cut(head, "[")
		state, _, _ = strings.Cut(state, "]")
		state, _, _ = strings.Cut(state, ",")
		g := Goroutine{ID: id, State: state, Stack: string(block)}
		for _, l := range lines[1:] {
			if by, ok := strings.CutPrefix(l, "created by "); ok {
				var in string
				g.CreatedBy, in, _ = strings.Cut(by, " in goroutine ")
				g.CreatedIn, _ = strconv.Atoi(in)
			} else if !strings.HasPrefix(l, "\t") {
				g.Funcs = append(g.Funcs, l)
			}
		}
		gs = append(gs, g)
	}
	return gs
}

// serverPackages are the prefixes of the functions that belong to servers
// under test: the student's or the reference code, and the given code they
// call. (This package's own tests add their fixture server.)
var serverPackages = []string{"serverlab/chapters/", "serverlab/solutions/", "serverlab/tools/"}

func isServerFunc(fn string) bool {
	for _, p := range serverPackages {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// serverGoroutines describes the goroutines, not in before, that belong to
// the server under test and are still running after a short grace: they run
// code of this module and were not started by the test itself.
//
// It looks at once, then once more after exitGrace, and reports only those
// seen both times. The first look has no retry window, so a Close that returns
// while its goroutines are still busy (slowed down by the slow logger) is caught
// every time; the second forgives a goroutine caught in the instant between its
// wg.Done and its return, which a correct server cannot avoid.
func serverGoroutines(before map[int]bool) string {
	first := serverGoroutinesNow(before)
	if len(first) == 0 {
		return ""
	}
	time.Sleep(exitGrace) // a grace period for goroutines on their way out, not synchronisation
	var out []string
	for id, desc := range serverGoroutinesNow(before) {
		if _, ok := first[id]; ok {
			out = append(out, desc)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// startedHere describes the goroutines, not in before, that this goroutine
// started through the server's code, whatever they run now: called right
// after the constructor, they are the constructor's. A goroutine that has
// just been started may not have run yet: its stack then shows only the
// function it is about to run (sync.WaitGroup.Go's wrapper, say), no code of
// the server, and serverGoroutines does not see it; its "created by … in
// goroutine N" line still says who started it. Counted: a go statement in the
// server's code, or WaitGroup.Go (whose function is the server's). Not
// counted: goroutines a library starts for itself (database/sql.OpenDB's
// connection opener), which the library's Close stops.
func startedHere(before map[int]bool) string {
	self := currentGoroutine()
	var out []string
	for _, g := range Goroutines() {
		byServer := isServerFunc(g.CreatedBy) || g.CreatedBy == "sync.(*WaitGroup).Go"
		here := g.CreatedIn == self || self == 0 && g.CreatedBy != "" && !strings.HasPrefix(g.CreatedBy, "serverlab/tests/")
		if !before[g.ID] && here && byServer {
			out = append(out, fmt.Sprintf("  goroutine %d, started by %s", g.ID, g.CreatedBy))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// currentGoroutine is the id of the calling goroutine, from its own stack
// ("goroutine 7 [running]:").
func currentGoroutine() int {
	if judge.IsJudge() {
		return 0 // the server's code ran in the subject, on the goroutine of an incoming call
	}
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	head, _ := strings.CutPrefix(string(buf), "goroutine ")
	idText, _, _ := strings.Cut(head, " ")
	id, _ := strconv.Atoi(idText)
	return id
}

// serverGoroutinesNow returns, by id, the goroutines not in before that run
// code of the server under test and were not started by the test itself
// (their outermost function is not in tests/ or testing).
func serverGoroutinesNow(before map[int]bool) map[int]string {
	found := map[int]string{}
	for _, g := range Goroutines() {
		if before[g.ID] || len(g.Funcs) == 0 {
			continue
		}
		outer := g.Funcs[len(g.Funcs)-1]
		isTests := strings.HasPrefix(outer, "serverlab/tests/") || strings.HasPrefix(outer, "testing.")
		if isTests && !isServerFunc(outer) {
			continue
		}
		for _, f := range g.Funcs {
			if isServerFunc(f) {
				found[g.ID] = fmt.Sprintf("  goroutine %d in %s", g.ID, trimArgs(f))
				break
			}
		}
	}
	return found
}

func trimArgs(fn string) string {
	if i := strings.LastIndexByte(fn, '('); i > 0 && strings.HasSuffix(fn, ")") {
		return fn[:i]
	}
	return fn
}

// allStacks is every goroutine's stack, as runtime.Stack prints them, of the
// process that runs the code under test: the subject's under tools/cmd/grade
// (less the goroutines that serve the judge), this one's under go test.
func allStacks() string { return judge.Stacks() }
