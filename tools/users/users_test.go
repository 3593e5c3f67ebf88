package users

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLineRoundTrip(t *testing.T) {
	u := User{Name: "alice", Password: "pass123", IP: "127.0.0.1", Port: 54321}
	if got := u.Line(); got != "alice pass123 127.0.0.1 54321\n" {
		t.Fatalf("Line() = %q", got)
	}
	back, err := ParseLine(strings.TrimSuffix(u.Line(), "\n"))
	if err != nil || back != u {
		t.Fatalf("ParseLine(Line()) = %+v, %v; want %+v", back, err, u)
	}
}

func TestParseLineSeparators(t *testing.T) {
	// The seed's own example aligns columns with runs of spaces.
	u, err := ParseLine("bob   secret  127.0.0.1 54322")
	if err != nil || u != (User{"bob", "secret", "127.0.0.1", 54322}) {
		t.Fatalf("ParseLine = %+v, %v", u, err)
	}
}

func TestValidate(t *testing.T) {
	bad := []User{
		{"", "pw", "127.0.0.1", 1},
		{"a b", "pw", "127.0.0.1", 1},
		{strings.Repeat("n", 32), "pw", "127.0.0.1", 1},
		{"a", "", "127.0.0.1", 1},
		{"a", "p\tw", "127.0.0.1", 1},
		{"a", "p\x00w", "127.0.0.1", 1},
		{"a", "pw", "", 1},
		{"a", "pw", "127.0.0.1", 70000},
		{"a", "pw", "127.0.0.1", -1},
	}
	for _, u := range bad {
		if err := u.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalid", u, err)
		}
	}
	if err := (User{strings.Repeat("n", 31), "pw", "::1", 0}).Validate(); err != nil {
		t.Errorf("a 31-byte name: %v", err)
	}
}

func TestReadTornAndMalformed(t *testing.T) {
	f, err := Read(strings.NewReader("alice pw 127.0.0.1 1\n\nbob pw 127.0.0.1 2\ncarol p"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Users) != 2 || f.Whole != int64(len("alice pw 127.0.0.1 1\n\nbob pw 127.0.0.1 2\n")) {
		t.Fatalf("Read = %+v; want alice and bob, and Whole ending before the torn line", f)
	}
	_, err = Read(strings.NewReader("alice pw 127.0.0.1 1\nbob pw\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("malformed line 2: err = %v, want one naming line 2", err)
	}
}

func TestLoadMissingFile(t *testing.T) {
	f, err := Load(filepath.Join(t.TempDir(), "none.txt"))
	if err != nil || len(f.Users) != 0 || f.Whole != 0 {
		t.Fatalf("Load(missing) = %+v, %v; want an empty store", f, err)
	}
	p := filepath.Join(t.TempDir(), "users.txt")
	os.WriteFile(p, []byte("x\n"), 0o600)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("Load of a malformed file: err = %v, want one naming the file", err)
	}
}

func TestIndexFirstWins(t *testing.T) {
	m := Index([]User{{"alice", "first", "a", 1}, {"alice", "second", "b", 2}, {"bob", "pw", "c", 3}})
	if len(m) != 2 || m["alice"].Password != "first" {
		t.Fatalf("Index = %+v; want the first alice", m)
	}
}
