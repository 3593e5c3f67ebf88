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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"serverlab/tools/given/wire"
)

func TestLineRoundTrip(t *testing.T) {
	u := User{Name: "alice", Password: "pass123", IP: "127.0.0.1", Port: 54321}
	require.Equal(t, "alice pass123 127.0.0.1 54321\n", u.Line(), "Line()")
	back, err := ParseLine(strings.TrimSuffix(u.Line(), "\n"))
	require.NoError(t, err, "ParseLine(Line())")
	require.Equal(t, u, back, "ParseLine(Line())")
}

func TestParseLineSeparators(t *testing.T) {
	// The seed's own example aligns columns with runs of spaces.
	u, err := ParseLine("bob   secret  127.0.0.1 54322")
	require.NoError(t, err, "ParseLine")
	require.Equal(t, User{"bob", "secret", "127.0.0.1", 54322}, u, "ParseLine")
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
		assert.ErrorIs(t, u.Validate(), ErrInvalid, "Validate(%+v)", u)
	}
	assert.NoError(t, User{strings.Repeat("n", 31), "pw", "::1", 0}.Validate(), "a 31-byte name")
}

func TestValidateNames(t *testing.T) {
	bad := map[string]error{
		wire.ServerName:                        ErrReserved,
		"Server":                               ErrReserved,
		"SERVER":                               ErrReserved,
		"ALL":                                  ErrReserved,
		"all":                                  ErrReserved,
		"ａｌｌ":                                  ErrReserved, // fullwidth
		"ali\u200bce":                          ErrInvalid,  // zero-width space
		"ali\u00adce":                          ErrInvalid,  // soft hyphen (a format character)
		"al\x01ice":                            ErrInvalid,
		"al\xffice":                            ErrInvalid, // not UTF-8
		"e\u0301":                              ErrInvalid, // not NFC
		"bob\u202e":                            ErrInvalid, // right-to-left override
		"a\u00a0b":                             ErrInvalid, // no-break space
		"\u0430lice":                           ErrScript,  // a Cyrillic а, then Latin letters: reads as alice
		"\u0455\u0435rv\u0435r":                ErrScript,  // Cyrillic ѕ and е among Latin letters: reads as server
		"\u13da\u13ac\u13a1\u13d9\u13ac\u13a1": ErrScript,  // Cherokee, not recommended for names: reads as SERVER
		"\u0391LL":                             ErrScript,  // Greek capital alpha, then Latin: reads as ALL
		"bob\U0001f600":                        ErrInvalid, // an emoji (RFC 8265 allows letters and digits)
		"\ufb01x":                              ErrInvalid, // the ligature ﬁ (a compatibility character)
		"abc\u05e9\u05dc\u05d5\u05dd":          ErrInvalid, // left-to-right, then right-to-left letters
	}
	for name, want := range bad {
		err := User{name, "pw", "127.0.0.1", 1}.Validate()
		assert.ErrorIs(t, err, want, "Validate(name %q)", name)
		assert.ErrorIs(t, err, ErrInvalid, "Validate(name %q)", name)
	}
	for _, name := range []string{"alice", "\u00e9lise", "Łukasz", "서버", "servers", "all-star", "x", "a!b#c~",
		"_x_", "1234", "1é", "9日本", "-Łukasz", "Иван", "Ελένη", "שלום", "日本語", "ひらがなカタカナ漢字", "東京abc", "한국어abc", "注音ㄅㄆ"} {
		assert.NoError(t, User{name, "pw", "127.0.0.1", 1}.Validate(), "Validate(name %q)", name)
	}
	assert.ErrorIs(t, User{"a", strings.Repeat("p", MaxPassword+1), "1.2.3.4", 1}.Validate(), ErrInvalid,
		"a %d-byte password", MaxPassword+1)
	assert.NoError(t, User{"a", strings.Repeat("p", MaxPassword), "1.2.3.4", 1}.Validate(),
		"a %d-byte password", MaxPassword)
	assert.Equal(t, Key("alice"), Key("ＡＬＩＣＥ"), "Key does not fold fullwidth capitals")
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
	require.NoError(t, err)
	var names []string
	for _, u := range f.Users {
		names = append(names, u.Name)
	}
	require.Equal(t, []string{"alice", "bob"}, names, "Read's users (every bad line costs that line only)")
	require.Equal(t, int64(len(in)-len("carol p")), f.Whole, "Read: Whole")
	require.Equal(t, int64(len(in)), f.Size, "Read: Size")
	require.False(t, f.Unterminated, "Read: Unterminated")
	require.Equal(t, 4, f.Skipped, "Read: Skipped")
	for _, want := range []string{"line=2", "line=4", "line=5", "torn last line"} {
		assert.Contains(t, out.String(), want, "what the log mentions")
	}
}

func TestReadKeepsValidUnterminatedLine(t *testing.T) {
	log, out := logBuffer()
	f, _ := Read(strings.NewReader("alice pw 127.0.0.1 1\nbob pw 127.0.0.1 2"), log)
	require.Len(t, f.Users, 2, "Read: want bob kept")
	require.True(t, f.Unterminated, "Read: Unterminated")
	require.Equal(t, int64(21), f.Whole, "Read: Whole")
	require.Equal(t, int64(39), f.Size, "Read: Size")
	assert.Contains(t, out.String(), "no newline", "an unterminated last line must be logged")
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
		require.NoError(t, err)
		size, err := f.Repair(fh, slog.New(slog.DiscardHandler))
		fh.Close()
		got, _ := os.ReadFile(p)
		assert.NoError(t, err, "Repair of %q", c.in)
		assert.Equal(t, c.want, string(got), "Repair of %q", c.in)
		assert.Equal(t, int64(len(c.want)), size, "Repair of %q: size", c.in)
	}
}

func TestReadLimits(t *testing.T) {
	var b strings.Builder
	for i := range MaxUsers + 5 {
		fmt.Fprintf(&b, "u%d pw 127.0.0.1 1\n", i)
	}
	f, _ := Read(strings.NewReader(b.String()), slog.New(slog.DiscardHandler))
	require.Len(t, f.Users, MaxUsers, "Read: want the limit on users")
	huge := strings.Repeat("x", MaxFileSize+10)
	f, _ = Read(strings.NewReader(huge), slog.New(slog.DiscardHandler))
	require.Equal(t, int64(MaxFileSize), f.Size, "Read of a %d-byte file: bytes read", len(huge))
}

func TestLoadMissingFile(t *testing.T) {
	f, err := Load(filepath.Join(t.TempDir(), "none.txt"), nil)
	require.NoError(t, err, "Load(missing)")
	require.Empty(t, f.Users, "Load(missing): want an empty store")
	require.Zero(t, f.Whole, "Load(missing): want an empty store")
}

func TestIndexFirstWins(t *testing.T) {
	m := Index([]User{{"alice", "first", "a", 1}, {"alice", "second", "b", 2}, {"bob", "pw", "c", 3}})
	require.Len(t, m, 2, "Index")
	require.Equal(t, "first", m["alice"].Password, "Index: want the first alice")
}

func TestCache(t *testing.T) {
	p := filepath.Join(t.TempDir(), "users.txt")
	c := NewCache(p, slog.New(slog.DiscardHandler))
	check := func(when string, budget int, want ...string) {
		t.Helper()
		require.NoError(t, c.Refresh(budget), "%s: Refresh", when)
		// Joined, so that no names and an empty list compare equal.
		require.Equal(t, strings.Join(want, " "), strings.Join(c.Names(), " "), "%s: Names()", when)
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
	require.NoError(t, c.Refresh(4096))
	require.Equal(t, []string{"erin"}, c.Names(), "after one piece of a reload: want the old list until the reload is done")
	for range 100 {
		c.Refresh(4096)
	}
	require.Len(t, c.Names(), 2000, "after the reload")
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

// FuzzValidateName: a name of printable ASCII is judged as the original
// servers judged it (only the reserved names are refused), so their clients
// keep their names; and a Latin letter swapped for its Cyrillic look-alike,
// in a name that keeps another Latin letter, is refused as a mix of scripts.
func FuzzValidateName(f *testing.F) {
	for _, name := range []string{"alice", "server", "ALL", "x", "a!b#c", "paypal", "~o~", "ali\u200bce", "\u0430lice"} {
		f.Add(name, uint8(0))
	}
	f.Fuzz(func(t *testing.T, name string, at uint8) {
		err := User{name, "pw", "127.0.0.1", 1}.Validate()
		if isPrintableASCII(name) && len(name) <= MaxName {
			if want := reserved[Key(name)]; want != errors.Is(err, ErrReserved) || !want && err != nil {
				t.Fatalf("Validate(name %q) = %v; the ASCII name %q must be refused only if reserved (%v)",
					name, err, name, want)
			}
		}
		if err != nil || !isPrintableASCII(name) {
			return
		}
		swapped, ok := swapLookAlike(name, int(at))
		if !ok || len(swapped) > MaxName {
			return
		}
		if err := (User{swapped, "pw", "127.0.0.1", 1}).Validate(); !errors.Is(err, ErrScript) {
			t.Fatalf("Validate(name %q) = %v; want ErrScript: it reads as %q, a valid name", swapped, err, name)
		}
	})
}

func isPrintableASCII(s string) bool {
	for i := range len(s) {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return s != ""
}

// cyrillicLookAlikes maps Latin letters to Cyrillic letters drawn the same.
var cyrillicLookAlikes = map[byte]rune{'a': 'а', 'c': 'с', 'e': 'е', 'o': 'о', 'p': 'р', 'x': 'х', 'y': 'у', 'i': 'і',
	's': 'ѕ', 'A': 'А', 'B': 'В', 'E': 'Е', 'K': 'К', 'M': 'М', 'H': 'Н', 'O': 'О', 'P': 'Р', 'C': 'С', 'T': 'Т'}

// swapLookAlike replaces the at'th (mod their count) letter of name that has
// a Cyrillic look-alike, if name keeps another Latin letter.
func swapLookAlike(name string, at int) (string, bool) {
	var swappable []int
	letters := 0
	for i := range len(name) {
		c := name[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			letters++
			if _, ok := cyrillicLookAlikes[c]; ok {
				swappable = append(swappable, i)
			}
		}
	}
	if len(swappable) == 0 || letters < 2 {
		return "", false
	}
	i := swappable[at%len(swappable)]
	return name[:i] + string(cyrillicLookAlikes[name[i]]) + name[i+1:], true
}
