package users

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"serverlab/tools/wire"
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

func TestValidateNames(t *testing.T) {
	bad := map[string]error{
		wire.ServerName: ErrReserved,
		"Server":        ErrReserved,
		"SERVER":        ErrReserved,
		"ALL":           ErrReserved,
		"all":           ErrReserved,
		"ａｌｌ":           ErrReserved, // fullwidth
		"ali\u200bce":   ErrInvalid,  // zero-width space
		"ali\u00adce":   ErrInvalid,  // soft hyphen (a format character)
		"al\x01ice":     ErrInvalid,
		"al\xffice":     ErrInvalid, // not UTF-8
		"e\u0301":       ErrInvalid, // not NFC
		"bob\u202e":     ErrInvalid, // right-to-left override
		"a\u00a0b":      ErrInvalid, // no-break space
	}
	for name, want := range bad {
		err := User{name, "pw", "127.0.0.1", 1}.Validate()
		if !errors.Is(err, want) || !errors.Is(err, ErrInvalid) {
			t.Errorf("Validate(name %q) = %v, want an error wrapping %v", name, err, want)
		}
	}
	for _, name := range []string{"alice", "\u00e9lise", "Łukasz", "서버", "servers", "all-star", "x"} {
		if err := (User{name, "pw", "127.0.0.1", 1}).Validate(); err != nil {
			t.Errorf("Validate(name %q) = %v, want nil", name, err)
		}
	}
	if err := (User{"a", strings.Repeat("p", MaxPassword+1), "1.2.3.4", 1}).Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("a %d-byte password: %v, want ErrInvalid", MaxPassword+1, err)
	}
	if err := (User{"a", strings.Repeat("p", MaxPassword), "1.2.3.4", 1}).Validate(); err != nil {
		t.Errorf("a %d-byte password: %v, want nil", MaxPassword, err)
	}
	if Key("ＡＬＩＣＥ") != Key("alice") {
		t.Errorf("Key does not fold fullwidth capitals")
	}
}

// logBuffer is a logger whose output a test can read.
func logBuffer() (*slog.Logger, *bytes.Buffer) {
	var b bytes.Buffer
	return slog.New(slog.NewTextHandler(&b, nil)), &b
}

func TestReadSkipsBadLines(t *testing.T) {
	// The original discovery server writes whatever it was sent: a name with
	// a space makes a line of five fields.
	in := "alice pw 127.0.0.1 1\nmary ann pw 127.0.0.1 2\n\nserver pw 1.2.3.4 5\n" +
		strings.Repeat("x", 3*MaxLine) + "\nbob pw 127.0.0.1 2\ncarol p"
	log, out := logBuffer()
	f, err := Read(strings.NewReader(in), log)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Users) != 2 || f.Users[0].Name != "alice" || f.Users[1].Name != "bob" {
		t.Fatalf("Read = %+v; want alice and bob (every bad line costs that line only)", f.Users)
	}
	if f.Whole != int64(len(in)-len("carol p")) || f.Size != int64(len(in)) || f.Unterminated || f.Skipped != 4 {
		t.Fatalf("Read: Whole %d Size %d Unterminated %v Skipped %d", f.Whole, f.Size, f.Unterminated, f.Skipped)
	}
	for _, want := range []string{"line=2", "line=4", "line=5", "torn last line"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the log does not mention %q:\n%s", want, out)
		}
	}
}

func TestReadKeepsValidUnterminatedLine(t *testing.T) {
	log, out := logBuffer()
	f, _ := Read(strings.NewReader("alice pw 127.0.0.1 1\nbob pw 127.0.0.1 2"), log)
	if len(f.Users) != 2 || !f.Unterminated || f.Whole != 21 || f.Size != 39 {
		t.Fatalf("Read = %+v; want bob kept and Unterminated", f)
	}
	if !strings.Contains(out.String(), "no newline") {
		t.Errorf("an unterminated last line was not logged:\n%s", out)
	}
}

func TestRepair(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"alice pw 127.0.0.1 1\nbob pw 127.0.0.1 2", "alice pw 127.0.0.1 1\nbob pw 127.0.0.1 2\n"},
		{"alice pw 127.0.0.1 1\nbob pw", "alice pw 127.0.0.1 1\n"},
		{"alice pw 127.0.0.1 1\n", "alice pw 127.0.0.1 1\n"},
	} {
		p := filepath.Join(t.TempDir(), "users.txt")
		os.WriteFile(p, []byte(c.in), 0o600)
		f, _ := Load(p, slog.New(slog.DiscardHandler))
		fh, err := os.OpenFile(p, os.O_RDWR|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		size, err := f.Repair(fh, slog.New(slog.DiscardHandler))
		fh.Close()
		got, _ := os.ReadFile(p)
		if err != nil || string(got) != c.want || size != int64(len(c.want)) {
			t.Errorf("Repair of %q: %q, size %d, %v; want %q", c.in, got, size, err, c.want)
		}
	}
}

func TestReadLimits(t *testing.T) {
	var b strings.Builder
	for i := range MaxUsers + 5 {
		fmt.Fprintf(&b, "u%d pw 127.0.0.1 1\n", i)
	}
	f, _ := Read(strings.NewReader(b.String()), slog.New(slog.DiscardHandler))
	if len(f.Users) != MaxUsers {
		t.Fatalf("Read kept %d users, want the limit %d", len(f.Users), MaxUsers)
	}
	huge := strings.Repeat("x", MaxFileSize+10)
	f, _ = Read(strings.NewReader(huge), slog.New(slog.DiscardHandler))
	if f.Size != MaxFileSize {
		t.Fatalf("Read of a %d-byte file read %d bytes, want at most %d", len(huge), f.Size, MaxFileSize)
	}
}

func TestLoadMissingFile(t *testing.T) {
	f, err := Load(filepath.Join(t.TempDir(), "none.txt"), nil)
	if err != nil || len(f.Users) != 0 || f.Whole != 0 {
		t.Fatalf("Load(missing) = %+v, %v; want an empty store", f, err)
	}
}

func TestIndexFirstWins(t *testing.T) {
	m := Index([]User{{"alice", "first", "a", 1}, {"alice", "second", "b", 2}, {"bob", "pw", "c", 3}})
	if len(m) != 2 || m["alice"].Password != "first" {
		t.Fatalf("Index = %+v; want the first alice", m)
	}
}

func TestCache(t *testing.T) {
	p := filepath.Join(t.TempDir(), "users.txt")
	c := NewCache(p, slog.New(slog.DiscardHandler))
	check := func(when string, budget int, want ...string) {
		t.Helper()
		if err := c.Refresh(budget); err != nil {
			t.Fatalf("%s: Refresh: %v", when, err)
		}
		if got := c.Names(); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("%s: Names() = %q, want %q", when, got, want)
		}
		for _, n := range want {
			if u, ok := c.Lookup(n); !ok || u.Password != "pw-"+n {
				t.Fatalf("%s: Lookup(%q) = %+v, %v", when, n, u, ok)
			}
		}
	}
	check("no file", 0)
	appendTo := func(s string) {
		fh, _ := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		fh.WriteString(s)
		fh.Close()
	}
	appendTo("bob pw-bob 127.0.0.1 1\nalice pw-alice 127.0.0.1 2\n")
	check("two users", 0, "alice", "bob")
	appendTo("bob stolen 1.1.1.1 1\ncarol pw-carol 1.1.1.1 1")
	check("a duplicate, and an unterminated line", 0, "alice", "bob", "carol")
	appendTo("\nmary ann x 1.1.1.1 1\ndave pw-dave 1.1.1.1 1\n")
	check("its newline, a bad line and dave", 0, "alice", "bob", "carol", "dave")
	os.WriteFile(p, []byte("erin pw-erin 1.1.1.1 1\n"), 0o600) // shorter: read again
	check("cut", 0, "erin")
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "u%04d pw-u%04d 1.1.1.1 1\n", i, i)
	}
	os.Remove(p)
	os.WriteFile(p, []byte(b.String()), 0o600) // another file: read again, a piece at a time
	if err := c.Refresh(4096); err != nil {
		t.Fatal(err)
	}
	if got := c.Names(); len(got) != 1 || got[0] != "erin" {
		t.Fatalf("after one piece of a reload, Names() = %d names; want the old list until the reload is done", len(got))
	}
	for range 100 {
		c.Refresh(4096)
	}
	if got := c.Names(); len(got) != 2000 {
		t.Fatalf("after the reload, %d names, want 2000", len(got))
	}
	os.Remove(p)
	check("removed", 0)
}

// FuzzRead: whatever the bytes, Read never fails on them, keeps only valid
// users, and agrees with itself: the lines of the users it kept, read again,
// give the same users (no line of a bad one leaks into the next).
func FuzzRead(f *testing.F) {
	f.Add([]byte("alice pw 127.0.0.1 1\nbob   secret  127.0.0.1 54322\n\nalice stolen 1.1.1.1 2\n"))
	f.Add([]byte("mary ann pw 127.0.0.1 1\nserver pw 1.1.1.1 1\r\nx y z 9\ncarol p"))
	f.Add([]byte("ali\u200bce pw 1.1.1.1 1\nbob pw 1.1.1.1 70000\ndave pw 1.1.1.1 2"))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Read(bytes.NewReader(in), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if got.Whole > got.Size || got.Size > int64(len(in)) {
			t.Fatalf("Whole %d, Size %d, input %d bytes", got.Whole, got.Size, len(in))
		}
		var again strings.Builder
		for _, u := range got.Users {
			if err := u.Validate(); err != nil {
				t.Fatalf("Read kept an invalid user %+v: %v", u, err)
			}
			again.WriteString(u.Line())
		}
		back, _ := Read(strings.NewReader(again.String()), slog.New(slog.DiscardHandler))
		if fmt.Sprint(back.Users) != fmt.Sprint(got.Users) || back.Skipped != 0 {
			t.Fatalf("the users Read kept do not read back the same:\n  kept: %v\n  back: %v", got.Users, back.Users)
		}
	})
}

// FuzzCache: a Cache that reads a file in pieces of any size, and one that
// reads it as it grows, know the same users as Read of the whole file.
func FuzzCache(f *testing.F) {
	f.Add([]byte("alice pw 127.0.0.1 1\nbob   secret  127.0.0.1 54322\n\nalice stolen 1.1.1.1 2\ncarol p"), uint16(7), uint16(30))
	f.Add([]byte("mary ann pw 127.0.0.1 1\nserver pw 1.1.1.1 1\r\ndave pw 1.1.1.1 2"), uint16(300), uint16(5))
	f.Fuzz(func(t *testing.T, in []byte, budget, cut uint16) {
		quiet := slog.New(slog.DiscardHandler)
		read, _ := Read(bytes.NewReader(in), quiet)
		var want []string
		for name := range Index(read.Users) {
			want = append(want, name)
		}
		slices.Sort(want)

		p := filepath.Join(t.TempDir(), "users.txt")
		split := min(int(cut), len(in))
		os.WriteFile(p, in[:split], 0o600) // the file as it was, then as it grew
		c := NewCache(p, quiet)
		c.Refresh(int(budget))
		fh, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		fh.Write(in[split:])
		fh.Close()
		for range len(in)/MaxLine + 3 {
			c.Refresh(int(budget))
		}
		if got := c.Names(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("Cache (pieces of %d bytes, file grown after %d) knows %q; Read knows %q", budget, split, got, want)
		}
		for _, name := range want {
			if u, ok := c.Lookup(name); !ok || u != Index(read.Users)[name] {
				t.Fatalf("Cache.Lookup(%q) = %+v, %v; Read has %+v", name, u, ok, Index(read.Users)[name])
			}
		}
	})
}
