package stocktest

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"serverlab/tests/testkit"
)

// never is a sync interval no check waits for: only the last client leaving
// (or Close) can trigger a write-back.
const never = time.Hour

// Persistence checks exercise 4.6: the stocks are written back to stock.txt,
// in pre-order, when the last client disconnects and every SyncInterval while
// clients are connected; the file is replaced atomically (a new file renamed
// over the old one, no temporary file left behind); and a write that fails
// halfway leaves the old file intact, is reported, and is retried later.
func Persistence(t *testing.T, impl Impl) {
	k := testkit.New(t, "4.6")
	checkLastClient(k, impl)
	checkInterval(k, impl)
	checkSyncWhileTrading(k, impl)
	checkFailedWrite(k, impl)
	checkStaleTemps(k, impl)
	checkCleanTreeNotWritten(k, impl)
	if impl.Threaded {
		checkSaveOutsideLock(k, impl)
	}
}

// checkStaleTemps: a kill -9 in the middle of a write-back leaves the
// temporary file behind. The server removes such files when it starts
// (stockfile.CleanTemps), or they pile up, one per crash.
func checkStaleTemps(k *testkit.T, impl Impl) {
	k.Helper()
	path := writeStocks(k, market)
	stale := filepath.Join(filepath.Dir(path), ".stock.txt.tmp-4242")
	if err := testkit.WriteFile(stale, []byte("5 10 1000\n3 2"), 0o600); err != nil {
		k.Fatalf("writing %s: %v", stale, err)
	}
	srv, _, _ := newServer(k, impl, Config{StockPath: path, SyncInterval: never}, market)
	exchange(k, k.Dial(srv), "show", newModel(parseStocks(k, market)).apply(mustParse("show")))
	onlyFile(k, path, "after a crash left "+filepath.Base(stale)+" and the server started (call "+
		"stockfile.CleanTemps before serving)")
}

// pauseWriter stops the first write of a write-back until released, so the
// suite can trade while the file is being written.
type pauseWriter struct {
	w       io.Writer
	once    *sync.Once
	paused  chan struct{}
	release chan struct{}
}

func (p pauseWriter) Write(b []byte) (int, error) {
	p.once.Do(func() {
		close(p.paused)
		select {
		case <-p.release:
		case <-time.After(testkit.WatchdogTimeout):
		}
	})
	return p.w.Write(b)
}

// checkSaveOutsideLock: the stock file is written after the snapshot's read
// lock is released, so a slow disk never holds up the clients. The write of
// the last client's write-back is stopped halfway; meanwhile a trade, which
// takes the tree's write lock with TreeLock, must go through.
func checkSaveOutsideLock(k *testkit.T, impl Impl) {
	k.Helper()
	s := make(syncs, 16)
	p, cfg := newLockProbe(k, Config{SyncInterval: never, OnSync: s.hook, TreeLock: true})
	paused, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	cfg.Saver.Intercept = func(w io.Writer) io.Writer {
		return pauseWriter{w: w, once: &once, paused: paused, release: release}
	}
	srv, _, _ := newServer(k, impl, cfg, market)
	p.freeAtCleanup(k)
	k.Cleanup(func() { // before the server's Close, registered earlier
		select {
		case <-release:
		default:
			close(release)
		}
	})
	m := newModel(parseStocks(k, market))
	a := k.Dial(srv)
	exchange(k, a, "buy 5 1", m.apply(mustParse("buy 5 1")))
	a.WriteLine("exit")
	a.ExpectClosed()
	select {
	case <-paused:
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("the only client bought and left; no write-back started within %v", testkit.IOTimeout)
	}
	b := k.Dial(srv)
	b.WriteLine("sell 5 1")
	reply := make(chan string, 1)
	go func() {
		text, err := readRecord(b)
		if err != nil {
			text = err.Error()
		}
		reply <- text
	}()
	select {
	case <-p.waits:
		k.Fatalf("while the stock file was being written (the write stopped halfway by the test), a client's " +
			"sell 5 1 waited for the tree's lock (TreeLock mode): take the snapshot under the read lock, " +
			"RUnlock, and only then write the file, or a slow disk stops every trade")
	case got := <-reply:
		if want := m.apply(mustParse("sell 5 1")); got != want {
			k.Fatalf("sell 5 1 while the stock file was being written\n  want: %q\n   got: %q%s", want, got, b.Context())
		}
	}
	close(release)
	if err := s.next(k, "after the write-back was released"); err != nil {
		k.Fatalf("the write-back failed: %v", err)
	}
}

// syncs collects OnSync calls.
type syncs chan error

func (s syncs) hook(err error) {
	select {
	case s <- err:
	default: // nobody is listening for that many; the check is failing anyway
	}
}

// next waits for the next write-back.
func (s syncs) next(k *testkit.T, after string) error {
	k.Helper()
	select {
	case err := <-s:
		return err
	case <-time.After(testkit.IOTimeout):
		k.Fatalf("%s, the stock file was not written back within %v (OnSync was not called)", after, testkit.IOTimeout)
		return nil
	}
}

func readText(k *testkit.T, path string) string {
	k.Helper()
	b, err := testkit.ReadFile(path)
	if err != nil {
		k.Fatalf("reading %s: %v", path, err)
	}
	return string(b)
}

// onlyFile: the folder holds stock.txt and nothing else (no temporary file
// left behind).
func onlyFile(k *testkit.T, path, after string) {
	k.Helper()
	entries, err := testkit.ReadDir(filepath.Dir(path))
	if err != nil {
		k.Fatalf("reading the stock file's folder: %v", err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{filepath.Base(path)}) {
		k.Fatalf("%s, the stock file's folder holds %q; want only %q (remove the temporary file when a "+
			"write fails)", after, names, filepath.Base(path))
	}
}

// checkLastClient: the last client to leave triggers a write-back, which
// replaces the file (a rename, not a rewrite in place).
func checkLastClient(k *testkit.T, impl Impl) {
	k.Helper()
	s := make(syncs, 16)
	srv, _, path := newServer(k, impl, Config{SyncInterval: never, OnSync: s.hook}, market)
	m := newModel(parseStocks(k, market))
	before, err := testkit.Stat(path)
	if err != nil {
		k.Fatalf("stat %s: %v", path, err)
	}
	a, b := k.Dial(srv), k.Dial(srv)
	exchange(k, a, "buy 5 3", m.apply(mustParse("buy 5 3")))
	exchange(k, b, "sell 8 2", m.apply(mustParse("sell 8 2")))
	a.WriteLine("exit")
	a.ExpectClosed()
	exchange(k, b, "buy 9 3", m.apply(mustParse("buy 9 3")))
	b.Close()
	after := "after two clients traded (buy 5 3, sell 8 2, buy 9 3) and left"
	for {
		if err := s.next(k, after); err != nil {
			k.Fatalf("%s, the write-back failed: %v", after, err)
		}
		if readText(k, path) == m.file() {
			break
		}
	}
	now, err := testkit.Stat(path)
	if err != nil {
		k.Fatalf("stat %s: %v", path, err)
	}
	if os.SameFile(before, now) {
		k.Fatalf("%s, stock.txt is the same file as before, rewritten in place: write a temporary file in "+
			"the same folder and rename it over stock.txt, so that a crash leaves the old or the new file", after)
	}
	onlyFile(k, path, after)
}

// checkInterval: while a client stays connected, the stocks are written back
// every SyncInterval.
func checkInterval(k *testkit.T, impl Impl) {
	k.Helper()
	s := make(syncs, 64)
	srv, _, path := newServer(k, impl, Config{SyncInterval: 20 * time.Millisecond, OnSync: s.hook}, market)
	m := newModel(parseStocks(k, market))
	c := k.Dial(srv)
	exchange(k, c, "buy 1 4", m.apply(mustParse("buy 1 4")))
	after := "with SyncInterval 20ms and a client connected after buy 1 4"
	deadline := time.Now().Add(testkit.IOTimeout)
	for readText(k, path) != m.file() {
		if time.Now().After(deadline) {
			k.Fatalf("%s, stock.txt was not written back within %v\n  want: %q\n   got: %q",
				after, testkit.IOTimeout, m.file(), readText(k, path))
		}
		if err := s.next(k, after); err != nil {
			k.Fatalf("%s, the write-back failed: %v", after, err)
		}
	}
	// Still connected and served.
	exchange(k, c, "show", m.apply(mustParse("show")))
}

// failAfter is a writer that takes a few bytes and then fails, like a full
// disk in the middle of a write.
type failAfter struct {
	w    io.Writer
	left int
}

var errInjected = errors.New("injected failure: disk full")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) <= f.left {
		f.left -= len(p)
		return f.w.Write(p)
	}
	n, _ := f.w.Write(p[:f.left])
	f.left = 0
	return n, errInjected
}

// failingDisk is a Config whose write-backs fail 7 bytes into the file until
// the returned flag is cleared, and report to s.
func failingDisk(s syncs) (Config, *atomic.Bool) {
	failing := new(atomic.Bool)
	failing.Store(true)
	cfg := Config{SyncInterval: never, OnSync: s.hook}
	cfg.Saver.Intercept = func(w io.Writer) io.Writer {
		if failing.Load() {
			return &failAfter{w: w, left: 7}
		}
		return w
	}
	return cfg, failing
}

// checkFailedWrite: a write-back that fails halfway leaves the old file, is
// reported through OnSync, and the changes are written by the next one.
func checkFailedWrite(k *testkit.T, impl Impl) {
	k.Helper()
	s := make(syncs, 16)
	cfg, failing := failingDisk(s)
	srv, _, path := newServer(k, impl, cfg, market)
	m := newModel(parseStocks(k, market))

	c := k.Dial(srv)
	exchange(k, c, "buy 3 2", m.apply(mustParse("buy 3 2")))
	c.WriteLine("exit")
	c.ExpectClosed()
	after := "after a client bought and left, with the disk failing 7 bytes into the write"
	err := s.next(k, after)
	if err == nil {
		k.Fatalf("%s, OnSync reported success: the write-back must go through Config.Saver, and report its error", after)
	}
	if got := readText(k, path); got != market {
		k.Fatalf("%s (OnSync: %v), stock.txt changed\n  want (the old file): %q\n   got: %q", after, err, market, got)
	}
	onlyFile(k, path, after)

	failing.Store(false)
	// A visit without a trade: the failed write-back's changes must still be
	// written (the tree stays dirty until a write-back succeeds).
	c = k.Dial(srv)
	exchange(k, c, "show", m.apply(mustParse("show")))
	c.WriteLine("exit")
	c.ExpectClosed()
	after = "after the disk recovered and a client came, looked (show, no trade) and left"
	if err := s.next(k, after); err != nil {
		k.Fatalf("%s, the write-back failed: %v", after, err)
	}
	if got := readText(k, path); got != m.file() {
		k.Fatalf("%s, stock.txt must hold the trade whose write-back failed (mark the tree dirty again when a "+
			"write-back fails)\n  want: %q\n   got: %q", after, m.file(), got)
	}
	c = k.Dial(srv)
	exchange(k, c, "sell 5 1", m.apply(mustParse("sell 5 1")))
	c.WriteLine("exit")
	c.ExpectClosed()
	after = "after the disk recovered and another client sold and left"
	if err := s.next(k, after); err != nil {
		k.Fatalf("%s, the write-back failed: %v", after, err)
	}
	if got := readText(k, path); got != m.file() {
		k.Fatalf("%s, stock.txt must hold both trades (the failed write-back's changes are not lost)\n"+
			"  want: %q\n   got: %q", after, m.file(), got)
	}
	onlyFile(k, path, after)
}
