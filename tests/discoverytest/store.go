package discoverytest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/users"
)

// UserStore checks exercise 1.3: the user store and its file.
func UserStore(t *testing.T, impl Impl) {
	k := testkit.New(t, "1.3")
	path := filepath.Join(t.TempDir(), "users.txt")
	s, err := impl.OpenStore(path)
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
	}
	wantFile(k, path, "alice pass123 127.0.0.1 54321\n", "after registering alice twice more")
	wantUser(k, s, alice)

	checkInvalidUsers(k, s, path)

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
	carol := users.User{Name: "carol", Password: "pw", IP: "127.0.0.1", Port: 3}
	if err := s.Register(carol); err != nil {
		k.Fatalf("Register(%v) after a restart: %v", carol, err)
	}
	s.Close()
	wantFile(k, path, alice.Line()+bob.Line()+carol.Line(), "after a restart and one more registration")

	checkTornLine(k, impl)
	checkOriginalsFile(k, impl)
	checkMalformedFile(k, impl)
}

func reopen(k *testkit.T, impl Impl, path string) Store {
	k.Helper()
	s, err := impl.OpenStore(path)
	if err != nil {
		k.Fatalf("OpenStore(%s) on an existing file: %v", path, err)
	}
	k.Cleanup(func() { s.Close() })
	return s
}

func wantFile(k *testkit.T, path, want, when string) {
	k.Helper()
	got, err := os.ReadFile(path)
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
	before, _ := os.ReadFile(path)
	invalid := []users.User{
		{Name: "", Password: "pw", IP: "127.0.0.1", Port: 1},
		{Name: "two words", Password: "pw", IP: "127.0.0.1", Port: 1},
		{Name: strings.Repeat("n", 32), Password: "pw", IP: "127.0.0.1", Port: 1},
		{Name: "dave", Password: "", IP: "127.0.0.1", Port: 1},
		{Name: "dave", Password: "pass word", IP: "127.0.0.1", Port: 1},
		{Name: "dave", Password: "pw\nmallory evil 1.2.3.4 5", IP: "127.0.0.1", Port: 1},
	}
	for _, u := range invalid {
		if err := s.Register(u); err == nil {
			k.Errorf("Register(%+v) succeeded; want an error (users.User.Validate says why)", u)
		}
	}
	wantFile(k, path, string(before), "after registering invalid users")
}

// checkTornLine: a crash in the middle of an append leaves a last line
// without '\n'. Opening the store must drop it, and the next registration must
// start on a line of its own.
func checkTornLine(k *testkit.T, impl Impl) {
	k.Helper()
	path := filepath.Join(k.TempDir(), "users.txt")
	os.WriteFile(path, []byte("alice pass123 127.0.0.1 54321\nbob sec"), 0o600)
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
	os.WriteFile(path, []byte("alice pass123 127.0.0.1 54321\nbob   secret  127.0.0.1 54322\n\nalice stolen 127.0.0.1 1\n"), 0o600)
	s := reopen(k, impl, path)
	wantUser(k, s, users.User{Name: "alice", Password: "pass123", IP: "127.0.0.1", Port: 54321})
	wantUser(k, s, users.User{Name: "bob", Password: "secret", IP: "127.0.0.1", Port: 54322})
}

// checkMalformedFile: a damaged file is refused with an error that says where.
func checkMalformedFile(k *testkit.T, impl Impl) {
	k.Helper()
	path := filepath.Join(k.TempDir(), "users.txt")
	os.WriteFile(path, []byte("alice pass123 127.0.0.1 54321\nbob secret\n"), 0o600)
	s, err := impl.OpenStore(path)
	if err == nil {
		s.Close()
		k.Fatalf("OpenStore accepted a file whose line 2 has two fields; want an error naming the line")
	}
	if !strings.Contains(err.Error(), "2") {
		k.Errorf("OpenStore's error for a malformed line 2 does not name the line: %v", err)
	}
	if errors.Is(err, os.ErrNotExist) {
		k.Errorf("OpenStore's error for a malformed file says the file does not exist: %v", err)
	}
}
