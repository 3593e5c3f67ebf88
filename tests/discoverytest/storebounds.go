package discoverytest

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"serverlab/tests/testkit"
	"serverlab/tools/given/users"
)

// checkRepairedSize: the size the store counts is the file's size after
// Repair, not before. A store that takes the size from os.Stat before Repair
// cut a torn last line off counts the torn bytes; a failed registration then
// cuts the file back to that size, which re-grows it (the truncate extends
// the file), and the next registration is glued to what a reader takes for
// part of a line: a user told OK is gone after a restart.
func checkRepairedSize(k *testkit.T, impl Impl) {
	k.Helper()
	path := filepath.Join(k.TempDir(), "users.txt")
	const whole, torn = "zoe pw 127.0.0.1 9\n", "bo"
	if err := testkit.WriteFile(path, []byte(whole+torn), 0o600); err != nil {
		k.Fatalf("writing %s: %v", path, err)
	}
	s, file := openFaulty(k, impl, path)
	file.failSync = true
	bob := users.User{Name: "bob", Password: "pw", IP: "127.0.0.1", Port: 2}
	if err := s.Register(bob); err == nil {
		k.Fatalf("store opened on %q (a torn last line); Register(bob) with a sync that failed returned nil, "+
			"want the error", whole+torn)
	}
	carol := users.User{Name: "carol", Password: "pw", IP: "127.0.0.1", Port: 3}
	if err := s.Register(carol); err != nil {
		k.Fatalf("store opened on %q; Register(carol) after bob's failed sync: %v", whole+torn, err)
	}
	wantFile(k, path, whole+carol.Line(), fmt.Sprintf("store opened on %q (its torn last line %q cut off by "+
		"Repair); after bob's registration failed (sync) and carol's succeeded. Likely cause: the size the store "+
		"cuts back to was taken before Repair (os.Stat), so it counts the %d torn bytes: keep the size Repair "+
		"returns", whole+torn, torn, len(torn)))
}

// checkFileSizeBound: the file is bounded in bytes as well as in users. A
// file that holds few users but long lines that are not users (an edited
// file, the original's 64 KiB passwords) can reach users.MaxFileSize; a
// reader reads no more than that, so a user appended beyond it is told OK
// and lost to every reader.
func checkFileSizeBound(k *testkit.T, impl Impl) {
	k.Helper()
	path := filepath.Join(k.TempDir(), "users.txt")
	const room = 10 // bytes left below MaxFileSize: less than any user's line
	content := strings.Repeat("#", users.MaxFileSize-room-1) + "\n"
	if err := testkit.WriteFile(path, []byte(content), 0o600); err != nil {
		k.Fatalf("writing %s: %v", path, err)
	}
	s, file := openFaulty(k, impl, path)
	file.noSync = true
	amy := users.User{Name: "amy", Password: "pw", IP: "127.0.0.1", Port: 1}
	err := s.Register(amy)
	if err == nil {
		k.Fatalf("store opened on a file of %d bytes (users.MaxFileSize %d, one long line that is not a user); "+
			"sent Register(%v) (%d bytes), want ErrFull, got nil: readers read at most MaxFileSize bytes, so "+
			"amy was told OK and is lost to them. Likely cause: Register bounds the users only; refuse a line "+
			"that would take the file past MaxFileSize (size + len(line) > users.MaxFileSize)",
			len(content), users.MaxFileSize, amy, len(amy.Line()))
	}
	wantFile(k, path, content, "a file 10 bytes short of MaxFileSize, after a registration refused")
}

// syncFreeFile is a users file whose Sync does nothing (many registrations
// in a fast check); it holds no state, so concurrent calls are the store's
// business.
type syncFreeFile struct{ users.AppendFile }

func (syncFreeFile) Sync() error { return nil }

// checkConcurrentRegister: the store is safe for concurrent use. The
// goroutine-per-client servers of later chapters, and the suites, call
// Register from many goroutines at once; without the store's mutex the
// index and the size are written concurrently (the race detector reports
// it), and lines or users go missing.
func checkConcurrentRegister(k *testkit.T, impl Impl) {
	k.Helper()
	path := filepath.Join(k.TempDir(), "users.txt")
	s, err := impl.OpenStore(path, func(p string) (users.AppendFile, error) {
		f, err := openAppend(p)
		if err != nil {
			return nil, err
		}
		return syncFreeFile{f}, nil
	})
	if err != nil {
		k.Fatalf("OpenStore(%s): %v", path, err)
	}
	k.Cleanup(func() { s.Close() })
	const goroutines, each = 8, 25
	errs := make(chan error, goroutines*each)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range goroutines {
		wg.Go(func() {
			<-start
			for i := range each {
				u := users.User{Name: fmt.Sprintf("g%d-u%02d", g, i), Password: "pw", IP: "127.0.0.1", Port: i + 1}
				if err := s.Register(u); err != nil {
					errs <- fmt.Errorf("Register(%v): %w", u, err)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		k.Fatalf("%d goroutines registering %d distinct users each at once: %v, want nil", goroutines, each, err)
	}
	b, err := testkit.ReadFile(path)
	if err != nil {
		k.Fatalf("reading %s: %v", path, err)
	}
	f, err := users.Read(strings.NewReader(string(b)), testkit.Logger())
	if err != nil {
		k.Fatalf("reading %s: %v", path, err)
	}
	if len(f.Users) != goroutines*each || f.Skipped != 0 {
		k.Fatalf("%d goroutines registered %d distinct users each at once: the file holds %d users and %d "+
			"lines that are not users, want %d and 0. Likely cause: Register does not hold the store's mutex "+
			"(s.mu) while it checks, writes and indexes", goroutines, each, len(f.Users), f.Skipped, goroutines*each)
	}
	for _, u := range f.Users {
		if got, ok := s.Lookup(u.Name); !ok || got != u {
			k.Fatalf("%d goroutines registered %d users each at once: Lookup(%q) = %+v, %v; want %+v, true "+
				"(the file has it, the index does not). Likely cause: Register does not hold s.mu",
				goroutines, each, u.Name, got, ok, u)
		}
	}
}
