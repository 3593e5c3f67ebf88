package testkit

import (
	"bufio"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"

	"serverlab/tools/given/lab"
)

// echo is a small server that keeps the contract, with switches that break it
// the ways students do.
type echo struct {
	log *slog.Logger

	noWait       bool // Close returns without waiting for the goroutines
	onceNoWait   bool // a second Close returns at once, without waiting
	startInNew   bool // a goroutine starts before Serve
	acceptIsExit bool // any Accept error ends Serve
	neverAccepts bool // Serve returns at once, as an unsolved stub does
	secondServes bool // a Serve while one serves serves too (refused only after Close)

	mu     sync.Mutex
	closed bool
	ln     net.Listener
	conns  map[net.Conn]bool
	done   chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
}

func newEcho(log *slog.Logger, broken func(*echo)) *echo {
	e := &echo{log: log, conns: map[net.Conn]bool{}, done: make(chan struct{})}
	if broken != nil {
		broken(e)
	}
	if e.startInNew {
		e.wg.Add(1)
		go func() { defer e.wg.Done(); <-e.done }()
	}
	return e
}

func (e *echo) Serve(ln net.Listener) error {
	e.mu.Lock()
	if e.closed || e.ln != nil && !e.secondServes {
		e.mu.Unlock()
		ln.Close() // Serve owns ln from the call on
		return lab.ErrServerClosed
	}
	if e.neverAccepts {
		e.mu.Unlock()
		return lab.ErrNotImplemented
	}
	e.ln = ln
	e.wg.Add(1)
	e.mu.Unlock()
	defer e.wg.Done()
	for {
		var conn net.Conn
		var err error
		if e.acceptIsExit {
			conn, err = ln.Accept()
			if err != nil {
				select {
				case <-e.done:
					return lab.ErrServerClosed
				default:
					return err
				}
			}
		} else if conn, err = lab.Accept(ln, e.done, e.log); err != nil {
			return err
		}
		e.mu.Lock()
		if e.closed { // Close ran while this connection was being accepted
			e.mu.Unlock()
			conn.Close()
			return lab.ErrServerClosed
		}
		e.conns[conn] = true
		e.wg.Add(1)
		e.mu.Unlock()
		go e.handle(conn)
	}
}

func (e *echo) handle(conn net.Conn) {
	defer e.wg.Done()
	defer e.log.Debug("connection ended", "remote", conn.RemoteAddr())
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		conn.Write([]byte(line))
	}
}

func (e *echo) Close() error {
	first := false
	e.once.Do(func() {
		first = true
		e.mu.Lock()
		e.closed = true
		close(e.done)
		if e.ln != nil {
			e.ln.Close()
		}
		for c := range e.conns {
			c.Close()
		}
		e.mu.Unlock()
	})
	if e.noWait || (e.onceNoWait && !first) {
		return nil
	}
	e.wg.Wait()
	return nil
}

func echoContract(broken func(*echo)) Contract {
	return Contract{
		New: func(log *slog.Logger) lab.Server { return newEcho(log, broken) },
		Probe: func(k *T, addr string) {
			c := k.DialAddr(addr)
			c.WriteLine("ping")
			c.ExpectLine("ping")
		},
	}
}

func init() {
	// The fixture server lives in this test package: count its goroutines as
	// a server's.
	serverPackages = append(serverPackages, "serverlab/tests/testkit.(*echo)", "serverlab/tests/testkit.newEcho")
}

func TestContractKept(t *testing.T) {
	New(t, "0.1").CheckContract(echoContract(nil))
}

func TestChildContractNoWait(t *testing.T) {
	onlyInChild(t)
	New(t, "0.1").CheckContract(echoContract(func(e *echo) { e.noWait = true }))
}

func TestChildContractSecondCloseNoWait(t *testing.T) {
	onlyInChild(t)
	New(t, "0.1").CheckContract(echoContract(func(e *echo) { e.onceNoWait = true }))
}

func TestChildContractStartInNew(t *testing.T) {
	onlyInChild(t)
	New(t, "0.1").CheckContract(echoContract(func(e *echo) { e.startInNew = true }))
}

func TestChildContractAcceptExit(t *testing.T) {
	onlyInChild(t)
	New(t, "0.1").CheckContract(echoContract(func(e *echo) { e.acceptIsExit = true }))
}

func TestChildContractNeverAccepts(t *testing.T) {
	onlyInChild(t)
	shortWaits()
	New(t, "0.1").CheckContract(echoContract(func(e *echo) { e.neverAccepts = true }))
}

func TestChildContractSecondServes(t *testing.T) {
	onlyInChild(t)
	shortWaits()
	New(t, "0.1").CheckContract(echoContract(func(e *echo) { e.secondServes = true }))
}

func TestContractBroken(t *testing.T) {
	for _, c := range []struct{ child, want string }{
		{"TestChildContractNoWait", "a Close call returned while goroutines of the server were still running"},
		{"TestChildContractSecondCloseNoWait", "a Close call returned while goroutines of the server were still running"},
		{"TestChildContractStartInNew", "building the server started goroutines before Serve"},
		{"TestChildContractAcceptExit", "after Accept failed with"},
		{"TestChildContractNeverAccepts", "without ever calling Accept on the listener it was given"},
		{"TestChildContractSecondServes", "a second Serve (another listener) while the first serves"},
	} {
		t.Run(c.child, func(t *testing.T) {
			out := runChild(t, c.child)
			if !strings.Contains(out, c.want) {
				t.Fatalf("child %s: want its failure to say %q; got:\n%s", c.child, c.want, out)
			}
		})
	}
}

// TestStartedHereSeesNewWorkers checks the part of nothing-before-serve that
// does not depend on scheduling: a worker a constructor starts with
// WaitGroup.Go counts as the constructor's even before it has run (its stack
// then shows only WaitGroup.Go's wrapper), and a goroutine started elsewhere
// does not.
func TestStartedHereSeesNewWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // the worker most likely has not run yet at the check
	stop := make(chan struct{})
	var wg sync.WaitGroup
	started := make(chan struct{})
	before := goroutineIDs()
	go func() { wg.Go(func() { <-stop }); close(started) }() // started in another goroutine: not counted
	<-started
	wg.Go(func() { <-stop }) // started here: counted
	got := startedHere(before)
	close(stop)
	wg.Wait()
	if strings.Count(got, "started by sync.(*WaitGroup).Go") != 1 {
		t.Fatalf("startedHere after one WaitGroup.Go here = %q; want exactly that one goroutine", got)
	}
}
