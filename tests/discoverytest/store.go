package discoverytest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/given/users"
	"serverlab/tools/given/wire"
)

// UserStore checks exercise 1.3: the user store and its file.
func UserStore(t *testing.T, impl Impl) {
	k := testkit.New(t, "1.3")
	path := filepath.Join(k.TempDir(), "users.txt")
	s, err := impl.OpenStore(path, nil)
	stopIfNotImplemented(k, err, "OpenStore")
	if err != nil {
		k.Fatalf("OpenStore on a missing file: %v (a missing file is an empty store)", err)
	}
	alice := users.User{Name: "alice", Password: "pass123", IP: "127.0.0.1", Port: 54321}
	err = s.Register(alice)
	stopIfNotImplemented(k, err, "Register")
	if err != nil {
		k.Fatalf("Register(%v) in an empty store: %v", alice, err)
	}
	wantFile(k, path, "alice pass123 127.0.0.1 54321\n", "after registering alice")
	wantUser(k, s, alice)

	// The same name and password again: accepted, nothing written.
	again := alice
	again.Port = 60000
	if err := s.Register(again); err != nil {
		k.Errorf("registering alice again with the same password: want success, got %v", err)
	}
	// The same name with another password: refused, nothing written.
	thief := users.User{Name: "alice", Password: "stolen", IP: "127.0.0.1", Port: 1}
	if err := s.Register(thief); err == nil {
		k.Errorf("registering alice with another password succeeded: the original let anyone take over an account this way; it must fail")
	} else if !errors.Is(err, impl.ErrTaken) {
		k.Errorf("registering alice with another password: got %v; want an error wrapping ErrTaken "+
			"(fmt.Errorf(\"%%q: %%w\", name, ErrTaken)), so that callers can tell it with errors.Is", err)
	}
	wantFile(k, path, "alice pass123 127.0.0.1 54321\n", "after registering alice twice more")
	wantUser(k, s, alice)

	checkInvalidUsers(k, s, path)
	checkLookAlikes(k, impl, s, path, "")

	bob := users.User{Name: "bob", Password: "secret", IP: "10.0.0.2", Port: 54322}
	if err := s.Register(bob); err != nil {
		k.Fatalf("Register(%v): %v", bob, err)
	}
	if err := s.Close(); err != nil {
		k.Errorf("Close: %v", err)
	}

	// A restart reads back what was registered, and appends after it.
	s = reopen(k, impl, path)
	wantUser(k, s, alice)
	wantUser(k, s, bob)
	// Every rule holds across a reopen: the names' keys come back with the
	// file, not only with the registrations of this run.
	checkLookAlikes(k, impl, s, path, "after the store was reopened")
	carol := users.User{Name: "carol", Password: "pw", IP: "127.0.0.1", Port: 3}
	if err := s.Register(carol); err != nil {
		k.Fatalf("Register(%v) after a restart: %v", carol, err)
	}
	s.Close()
	wantFile(k, path, alice.Line()+bob.Line()+carol.Line(), "after a restart and one more registration")

	checkUnreadableFile(k, impl)
	checkTornLine(k, impl)
	checkOpenFailureCloses(k, impl)
	checkUnterminatedLine(k, impl)
	checkOriginalsFile(k, impl)
	checkMalformedFile(k, impl)
	checkSynced(k, impl)
	checkFailedWrites(k, impl, "")
	// A failure path holds from every state, not only the empty file's: after
	// a restart the store must know the size of what is there.
	checkFailedWrites(k, impl, "zoe pw 127.0.0.1 9\nyan pw 127.0.0.1 8\n")
	checkFull(k, impl)
	checkFullAfterReopen(k, impl)
	checkRepairedSize(k, impl)
	checkFileSizeBound(k, impl)
	checkFileSizeExact(k, impl) // storeexact.go
	checkConcurrentRegister(k, impl)
}

func reopen(k *testkit.T, impl Impl, path string) Store {
	k.Helper()
	s, err := impl.OpenStore(path, nil)
	if err != nil {
		k.Fatalf("OpenStore(%s) on an existing file: %v", path, err)
	}
	k.Cleanup(func() { s.Close() })
	return s
}

func wantFile(k *testkit.T, path, want, when string) {
	k.Helper()
	got, err := testkit.ReadFile(path)
	if err != nil {
		k.Fatalf("%s: reading %s: %v", when, path, err)
	}
	if string(got) != want {
		k.Fatalf("%s: users file\n  want: %q\n   got: %q", when, want, got)
	}
}

func wantUser(k *testkit.T, s Store, want users.User) {
	k.Helper()
	got, ok := s.Lookup(want.Name)
	if !ok || got != want {
		k.Fatalf("Lookup(%q)\n  want: %+v\n   got: %+v (found %v)", want.Name, want, got, ok)
	}
}

// checkInvalidUsers: users that could not be written as one line of four
// fields, or whose name cannot fit in a frame, are refused and leave the file
// as it was.
func checkInvalidUsers(k *testkit.T, s Store, path string) {
	k.Helper()
	before, _ := testkit.ReadFile(path)
	invalid := []users.User{
		{Name: "", Password: "pw", IP: "127.0.0.1", Port: 1},
		{Name: "two words", Password: "pw", IP: "127.0.0.1", Port: 1},
		{Name: strings.Repeat("n", 32), Password: "pw", IP: "127.0.0.1", Port: 1},
		{Name: "dave", Password: "", IP: "127.0.0.1", Port: 1},
		{Name: "dave", Password: "pass word", IP: "127.0.0.1", Port: 1},
		{Name: "dave", Password: "pw\nmallory evil 1.2.3.4 5", IP: "127.0.0.1", Port: 1},
		{Name: "dave", Password: strings.Repeat("p", users.MaxPassword+1), IP: "127.0.0.1", Port: 1},
		{Name: wire.ServerName, Password: "pw", IP: "127.0.0.1", Port: 1},
		{Name: "Server", Password: "pw", IP: "127.0.0.1", Port: 1},
		{Name: "all", Password: "pw", IP: "127.0.0.1", Port: 1},
		{Name: "ali\u200bce", Password: "pw", IP: "127.0.0.1", Port: 1},
		{Name: "bo\xffb", Password: "pw", IP: "127.0.0.1", Port: 1},
		{Name: "\u0430lice", Password: "pw", IP: "127.0.0.1", Port: 1}, // a Cyrillic а: mixed scripts
	}
	for _, u := range invalid {
		if err := s.Register(u); err == nil {
			k.Errorf("Register(%+v) succeeded; want an error (users.User.Validate says why)", u)
		}
	}
	wantFile(k, path, string(before), "after registering invalid users")
}

// checkUnreadableFile: a users file that cannot be read is an error of
// OpenStore, not an empty store: a store that started empty would let anyone
// register a name the file gives to someone else. Here users.txt is a
// directory, which opens but cannot be read; the open function OpenStore is
// given opens another file for appending, so that only the read fails.
func checkUnreadableFile(k *testkit.T, impl Impl) {
	k.Helper()
	dir := k.TempDir()
	path := filepath.Join(dir, "users.txt")
	if err := testkit.Mkdir(path, 0o700); err != nil {
		k.Fatalf("test bug: %v", err)
	}
	other := filepath.Join(dir, "append.txt")
	s, err := impl.OpenStore(path, func(string) (users.AppendFile, error) { return openAppend(other) })
	if err == nil {
		s.Close()
		k.Fatalf("OpenStore(%s), where %s is a directory (reading it fails: users.Load returns an error)\n"+
			"  want: an error\n   got: a store, and no error; it knows none of the file's users\n"+
			"hint: check the error users.Load returns: a store that cannot read its file must not start empty, "+
			"or anyone can register a name the file gives to someone else", path, filepath.Base(path))
	}
}

// checkTornLine: a crash in the middle of an append leaves a last line
// without '\n'. Opening the store must drop it, and the next registration must
// start on a line of its own.
func checkTornLine(k *testkit.T, impl Impl) {
	k.Helper()
	path := filepath.Join(k.TempDir(), "users.txt")
	testkit.WriteFile(path, []byte("alice pass123 127.0.0.1 54321\nbob sec"), 0o600)
	s := reopen(k, impl, path)
	if _, ok := s.Lookup("bob"); ok {
		k.Errorf("a torn last line (no '\\n', written by a crash) was read as a user")
	}
	wantUser(k, s, users.User{Name: "alice", Password: "pass123", IP: "127.0.0.1", Port: 54321})
	erin := users.User{Name: "erin", Password: "pw", IP: "127.0.0.1", Port: 9}
	if err := s.Register(erin); err != nil {
		k.Fatalf("Register(%v) after opening a file with a torn last line: %v", erin, err)
	}
	wantFile(k, path, "alice pass123 127.0.0.1 54321\n"+erin.Line(),
		"after opening a file whose last line was torn by a crash, and registering erin")
}

// checkOriginalsFile: the original server appended duplicates; the first
// registration of a name owns it.
func checkOriginalsFile(k *testkit.T, impl Impl) {
	k.Helper()
	path := filepath.Join(k.TempDir(), "users.txt")
	testkit.WriteFile(path, []byte("alice pass123 127.0.0.1 54321\nbob   secret  127.0.0.1 54322\n\nalice stolen 127.0.0.1 1\n"), 0o600)
	s := reopen(k, impl, path)
	wantUser(k, s, users.User{Name: "alice", Password: "pass123", IP: "127.0.0.1", Port: 54321})
	wantUser(k, s, users.User{Name: "bob", Password: "secret", IP: "127.0.0.1", Port: 54322})
}

// checkMalformedFile: a line that is not a valid user costs that line only:
// the store opens, knows the users on the other lines, and appends after
// them. The file below is what the original discovery server writes when a
// client registers a name with a space (five fields), and more damage.
func checkMalformedFile(k *testkit.T, impl Impl) {
	k.Helper()
	path := filepath.Join(k.TempDir(), "users.txt")
	content := "alice pass123 127.0.0.1 54321\nmary ann pw 127.0.0.1 5\nbob secret\n" +
		"server pw 1.2.3.4 1\n" + strings.Repeat("x", 2*users.MaxLine) + "\ncarol pw 127.0.0.1 3\n"
	testkit.WriteFile(path, []byte(content), 0o600)
	s, err := impl.OpenStore(path, nil)
	if err != nil {
		k.Fatalf("OpenStore on a file with bad lines 2 to 5: %v\n  file: %q\n"+
			"want the store to open: a bad line costs that line only (users.Load skips and logs it)", err, content)
	}
	k.Cleanup(func() { s.Close() })
	wantUser(k, s, users.User{Name: "alice", Password: "pass123", IP: "127.0.0.1", Port: 54321})
	wantUser(k, s, users.User{Name: "carol", Password: "pw", IP: "127.0.0.1", Port: 3})
	for _, name := range []string{"mary", "server", "bob"} {
		if u, ok := s.Lookup(name); ok {
			k.Errorf("Lookup(%q) found %+v, read from a bad line", name, u)
		}
	}
	dave := users.User{Name: "dave", Password: "pw", IP: "127.0.0.1", Port: 4}
	if err := s.Register(dave); err != nil {
		k.Fatalf("Register(%v) in a store opened from a file with bad lines: %v", dave, err)
	}
	wantFile(k, path, content+dave.Line(), "after registering dave in a file with bad lines")
}

// checkUnterminatedLine: a last line without '\n' that is a valid user (a
// file edited by hand) is kept, and mended, so that the next registration
// starts on a line of its own.
func checkUnterminatedLine(k *testkit.T, impl Impl) {
	k.Helper()
	path := filepath.Join(k.TempDir(), "users.txt")
	testkit.WriteFile(path, []byte("alice pass123 127.0.0.1 54321\nbob secret 127.0.0.1 54322"), 0o600)
	s := reopen(k, impl, path)
	wantUser(k, s, users.User{Name: "bob", Password: "secret", IP: "127.0.0.1", Port: 54322})
	erin := users.User{Name: "erin", Password: "pw", IP: "127.0.0.1", Port: 9}
	if err := s.Register(erin); err != nil {
		k.Fatalf("Register(%v): %v", erin, err)
	}
	wantFile(k, path, "alice pass123 127.0.0.1 54321\nbob secret 127.0.0.1 54322\n"+erin.Line(),
		"after opening a file whose valid last line had no '\\n' (users.File.Repair mends it), and registering erin")
}

// checkLookAlikes: a name that a reader cannot tell from a registered one
// (other case, fullwidth letters) belongs to the first; it is refused.
func checkLookAlikes(k *testkit.T, impl Impl, s Store, path, when string) {
	k.Helper()
	before, _ := testkit.ReadFile(path)
	for _, name := range []string{"Alice", "ALICE", "ａｌｉｃｅ"} {
		err := s.Register(users.User{Name: name, Password: "other", IP: "127.0.0.1", Port: 1})
		if !errors.Is(err, impl.ErrTaken) {
			k.Errorf("alice is registered%s; registering %q (a look-alike: users.Key(%q) == users.Key(\"alice\")) "+
				"got %v; want an error wrapping ErrTaken (OpenStore must fill the keys from the file too)",
				" "+when, name, name, err)
		}
	}
	wantFile(k, path, string(before), "after registering look-alikes of alice")
}

// faultyFile wraps the users file to record the writes and syncs a store
// makes, and to make them fail on demand.
type faultyFile struct {
	users.AppendFile
	ops       []string // "write" and "sync", in order
	failWrite bool     // the next Write writes half and fails
	failSync  bool     // the next Sync fails
	noSync    bool     // Sync is recorded but not done (a fast check of many writes)
}

var errInjected = errors.New("injected failure (the disk is full)")

func (f *faultyFile) Write(p []byte) (int, error) {
	f.ops = append(f.ops, "write")
	if f.failWrite {
		f.failWrite = false
		n, _ := f.AppendFile.Write(p[:len(p)/2])
		return n, errInjected
	}
	return f.AppendFile.Write(p)
}

func (f *faultyFile) Sync() error {
	f.ops = append(f.ops, "sync")
	if f.failSync {
		f.failSync = false
		return errInjected
	}
	if f.noSync {
		return nil
	}
	return f.AppendFile.Sync()
}

// openFaulty opens a store whose file is a faultyFile.
func openFaulty(k *testkit.T, impl Impl, path string) (Store, *faultyFile) {
	k.Helper()
	var file *faultyFile
	s, err := impl.OpenStore(path, func(p string) (users.AppendFile, error) {
		f, err := openAppend(p)
		file = &faultyFile{AppendFile: f}
		return file, err
	})
	if err != nil {
		k.Fatalf("OpenStore(%s): %v", path, err)
	}
	if file == nil {
		k.Fatalf("OpenStore did not open the file with the open function it was given (StoreOptions.Open)")
	}
	k.Cleanup(func() { s.Close() })
	return s, file
}

// checkSynced: Register returns only after the line it wrote is synced.
func checkSynced(k *testkit.T, impl Impl) {
	k.Helper()
	path := filepath.Join(k.TempDir(), "users.txt")
	s, file := openFaulty(k, impl, path)
	for _, name := range []string{"alice", "bob"} {
		file.ops = nil
		if err := s.Register(users.User{Name: name, Password: "pw", IP: "127.0.0.1", Port: 1}); err != nil {
			k.Fatalf("Register(%s): %v", name, err)
		}
		if n := len(file.ops); n == 0 || file.ops[n-1] != "sync" || !slices.Contains(file.ops, "write") {
			k.Fatalf("Register(%s) returned after these operations on the file: %v; want the line written and "+
				"then synced (f.Sync()) before Register returns: a user told OK must survive a power cut", name, file.ops)
		}
	}
}

// checkFailedWrites: a write or sync that fails makes Register fail, and
// leaves the file with whole lines only (what part of the line reached it is
// cut off), so that the next registration is not glued to a torn line. The
// store is opened on a file that holds initial: a store that forgot the size
// of what it found would cut the file back to nothing.
func checkFailedWrites(k *testkit.T, impl Impl, initial string) {
	k.Helper()
	path := filepath.Join(k.TempDir(), "users.txt")
	state := "an empty file"
	if initial != "" {
		state = fmt.Sprintf("a file of %d bytes (reopened)", len(initial))
		if err := testkit.WriteFile(path, []byte(initial), 0o600); err != nil {
			k.Fatalf("writing %s: %v", path, err)
		}
	}
	s, file := openFaulty(k, impl, path)
	alice := users.User{Name: "alice", Password: "pw", IP: "127.0.0.1", Port: 1}
	if err := s.Register(alice); err != nil {
		k.Fatalf("Register(alice) in a store opened on %s: %v", state, err)
	}
	for _, c := range []struct {
		what string
		arm  func()
	}{
		{"a write that wrote half the line and failed", func() { file.failWrite = true }},
		{"a sync that failed", func() { file.failSync = true }},
	} {
		c.arm()
		bob := users.User{Name: "bob", Password: "pw", IP: "127.0.0.1", Port: 2}
		if err := s.Register(bob); err == nil {
			k.Fatalf("Register(bob) after %s returned nil; want the error", c.what)
		}
		wantFile(k, path, initial+alice.Line(), fmt.Sprintf("store opened on %s; after %s (cut the file back "+
			"to its last whole line: Truncate(size), where size is the length of the whole lines the file holds: "+
			"what it had when opened plus every line a Register wrote and synced since)", state, c.what))
		if _, ok := s.Lookup("bob"); ok {
			k.Fatalf("after %s, Lookup(bob) finds bob: a failed registration must leave the index alone", c.what)
		}
	}
	carol := users.User{Name: "carol", Password: "pw", IP: "127.0.0.1", Port: 3}
	if err := s.Register(carol); err != nil {
		k.Fatalf("Register(carol) after two failed writes: %v", err)
	}
	wantFile(k, path, initial+alice.Line()+carol.Line(), "store opened on "+state+"; after two failed registrations of bob, and carol's")
	// Nothing of bob's failed registrations stayed: not in the index, not
	// among the names' keys (which would refuse bob as a look-alike of
	// himself).
	bob := users.User{Name: "bob", Password: "pw", IP: "127.0.0.1", Port: 2}
	if err := s.Register(bob); err != nil {
		k.Fatalf("Register(bob) after two failed registrations of bob: %v; want success: a failed registration "+
			"must leave the index, the keys and the size as they were", err)
	}
}

// checkFull: the file holds at most users.MaxUsers users; registrations
// beyond are refused and write nothing. (Without a bound, unauthenticated
// registrations grow the file, and every reader of it, without end.)
func checkFull(k *testkit.T, impl Impl) {
	k.Helper()
	path := filepath.Join(k.TempDir(), "users.txt")
	s, file := openFaulty(k, impl, path)
	file.noSync = true // 10,000 fsyncs would take minutes
	for i := range users.MaxUsers {
		u := users.User{Name: fmt.Sprintf("u%05d", i), Password: "pw", IP: "127.0.0.1", Port: 1}
		if err := s.Register(u); err != nil {
			k.Fatalf("Register of user %d of %d: %v", i+1, users.MaxUsers, err)
		}
	}
	before, _ := testkit.ReadFile(path)
	if err := s.Register(users.User{Name: "one-too-many", Password: "pw", IP: "127.0.0.1", Port: 1}); err == nil {
		k.Fatalf("with users.MaxUsers (%d) users registered, one more was accepted: the file must be bounded", users.MaxUsers)
	}
	wantFile(k, path, string(before), "after a registration refused because the file is full")
	checkRegisteredWhenFull(k, s, path, "")
}

// checkRegisteredWhenFull: a full file refuses new users only. A user
// already registered who registers again with the same password is
// accepted (it changes nothing), and one with another password is refused.
func checkRegisteredWhenFull(k *testkit.T, s Store, path, when string) {
	k.Helper()
	before, _ := testkit.ReadFile(path)
	first := users.User{Name: "u00000", Password: "pw", IP: "127.0.0.1", Port: 7}
	if err := s.Register(first); err != nil {
		k.Errorf("the file is full%s; u00000, registered, registered again with its own password: got %v; "+
			"want success (it writes nothing: check the name before the bound)", when, err)
	}
	if err := s.Register(users.User{Name: "u00000", Password: "other", IP: "127.0.0.1", Port: 7}); err == nil {
		k.Errorf("the file is full%s; u00000 registered again with another password succeeded; want ErrTaken", when)
	}
	wantFile(k, path, string(before), "the file is full"+when+"; after u00000 registered again")
}

// checkFullAfterReopen: a file that is full when the store opens is full:
// the bound counts what the file holds, not what this run registered.
func checkFullAfterReopen(k *testkit.T, impl Impl) {
	k.Helper()
	path := filepath.Join(k.TempDir(), "users.txt")
	var b strings.Builder
	for i := range users.MaxUsers {
		b.WriteString(users.User{Name: fmt.Sprintf("u%05d", i), Password: "pw", IP: "127.0.0.1", Port: 1}.Line())
	}
	if err := testkit.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		k.Fatalf("writing %s: %v", path, err)
	}
	s, file := openFaulty(k, impl, path)
	file.noSync = true
	if err := s.Register(users.User{Name: "one-too-many", Password: "pw", IP: "127.0.0.1", Port: 1}); err == nil {
		k.Fatalf("a store opened on a file of users.MaxUsers (%d) users accepted one more: the bound must count "+
			"the users read from the file", users.MaxUsers)
	}
	wantFile(k, path, b.String(), "store opened on a full file; after a registration refused")
	checkRegisteredWhenFull(k, s, path, " (read from the file)")
}

// openAppend is users.OpenAppend confined to the check's scratch folder. The
// store's open function runs here, in the judge, with a path the subject
// chose: opened unconfined, it would let the subject's code append through the
// judge to any file the judge may write.
func openAppend(path string) (users.AppendFile, error) {
	f, err := testkit.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err // not a nil *os.File in a non-nil interface
	}
	return f, nil
}
