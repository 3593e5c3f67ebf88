// Package users reads and writes users.txt, the user store of the chat
// protocol v1 servers (docs/protocols.md §1): one user per line,
//
//	<username> <password> <ip> <port>
//
// with plaintext passwords, as in the original (chapter 01's lesson says why
// that is bad; chapter 07 hashes). The discovery server of chapter 01 appends
// to it and the chat servers of chapters 02 and 05 read it, all through this
// package, so that the format, its limits and the treatment of a damaged line
// have one home and are the same in every chapter.
//
// The file comes from the network (every field of a line was sent by a
// client) and from other programs (the original discovery server writes it
// too), so nothing in it is trusted: a line that is not a valid user costs
// that line only, and is logged; the file, each line and each field are
// bounded, so a flood of registrations cannot make a reader slow or big.
package users

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/secure/bidirule"
	"golang.org/x/text/secure/precis"
	"golang.org/x/text/unicode/bidi"
	"golang.org/x/text/unicode/norm"

	"serverlab/tools/given/wire"
)

// Limits of the users file. The original had none: 64 KiB passwords grew its
// file by 149 MB in 10 seconds, and every reader slowed down with it.
const (
	MaxName     = wire.MaxName // bytes: a name must fit a frame's name field
	MaxPassword = 64           // bytes
	MaxIP       = 64           // bytes: an IPv6 address with a zone fits
	// MaxLine bounds one line, '\n' included; every valid line is shorter.
	MaxLine = 256
	// MaxUsers bounds the users a file holds: the discovery server refuses
	// to register more, and readers read no more.
	MaxUsers = 10000
	// MaxFileSize bounds what a reader reads of the file: MaxUsers lines of
	// the longest kind (2.5 MB, a few milliseconds to parse).
	MaxFileSize = MaxUsers * MaxLine
)

// User is one line of users.txt.
type User struct {
	Name     string
	Password string
	IP       string // the address the user registered from
	Port     int
}

// ErrInvalid is wrapped by every validation error.
var ErrInvalid = errors.New("invalid user")

// ErrScript is wrapped (with ErrInvalid) for a name whose letters mix
// scripts, or come from a script not recommended for names (checkScripts).
var ErrScript = errors.New("mixed or uncommon scripts")

// ErrReserved is wrapped (with ErrInvalid) for a name that is, or looks
// like, one the protocol gives a meaning: wire.ServerName, wire.Everyone.
var ErrReserved = errors.New("reserved name")

// Validate checks that u can be stored and read back, and that its name
// cannot pass for anyone else's:
//
//   - no field may contain white space or NUL (the file is split on white
//     space), and each is bounded (MaxName, MaxPassword, MaxIP);
//   - a name is valid UTF-8 in NFC, made of visible characters only: no
//     control or format characters (U+200B ZERO WIDTH SPACE makes "ali​ce"
//     print as "alice"), and no two byte sequences for one text ("é" as one
//     code point or as "e" and a combining accent);
//   - a name is a user name as RFC 8265 defines it (the PRECIS
//     UsernameCaseMapped profile, golang.org/x/text/secure/precis): letters
//     and digits of any script and printable ASCII, but no symbols outside
//     ASCII, no compatibility characters ("ﬁ", "ⅿ"), no mix of left-to-right
//     and right-to-left text;
//   - its letters come from one script (checkScripts): "аlice" with a
//     Cyrillic "а" is not a second "alice";
//   - a name is not wire.ServerName or wire.Everyone, nor any spelling that
//     folds to one of them (Key): a user named "Server" would send messages
//     that read as the server's notices.
//
// A name of printable ASCII characters passes every rule but the last, as
// with the original servers.
func (u User) Validate() error {
	if err := checkField("name", u.Name, MaxName); err != nil {
		return err
	}
	if err := checkName(u.Name); err != nil {
		return err
	}
	if err := checkField("password", u.Password, MaxPassword); err != nil {
		return err
	}
	if err := checkField("ip", u.IP, MaxIP); err != nil {
		return err
	}
	if u.Port < 0 || u.Port > 65535 {
		return fmt.Errorf("%w: port %d out of range", ErrInvalid, u.Port)
	}
	return nil
}

func checkField(what, s string, max int) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty %s", ErrInvalid, what)
	case len(s) > max:
		return fmt.Errorf("%w: %s is %d bytes (limit %d)", ErrInvalid, what, len(s), max)
	case strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == 0 }) >= 0:
		return fmt.Errorf("%w: %s %q contains white space or NUL", ErrInvalid, what, s)
	}
	return nil
}

// checkName applies the rules that make a name mean one thing to a reader.
func checkName(name string) error {
	if !utf8.ValidString(name) {
		return fmt.Errorf("%w: name %q is not valid UTF-8", ErrInvalid, name)
	}
	for _, r := range name {
		if !unicode.IsGraphic(r) || unicode.IsSpace(r) {
			return fmt.Errorf("%w: name %q contains the invisible character %U", ErrInvalid, name, r)
		}
	}
	if !norm.NFC.IsNormalString(name) {
		return fmt.Errorf("%w: name %q is not in Unicode normal form C (send it as %q)",
			ErrInvalid, name, norm.NFC.String(name))
	}
	if err := checkScripts(name); err != nil {
		return err
	}
	if _, err := nameProfile.String(name); err != nil {
		return fmt.Errorf("%w: name %q is not a user name as RFC 8265 defines it: %v", ErrInvalid, name, err)
	}
	// RFC 8265 applies the Bidi Rule to names with right-to-left letters
	// only (x/text's profile applies it to every name that is not ASCII, and
	// would refuse "1é").
	if bidirule.DirectionString(name) != bidi.LeftToRight && !bidirule.ValidString(name) {
		return fmt.Errorf("%w: name %q mixes left-to-right and right-to-left text in a way that can "+
			"display as another name (RFC 5893's Bidi Rule)", ErrInvalid, name)
	}
	if reserved[Key(name)] {
		return fmt.Errorf("%w: %w: %q", ErrInvalid, ErrReserved, name)
	}
	return nil
}

// nameProfile is RFC 8265's UsernameCaseMapped profile (the PRECIS
// IdentifierClass, fullwidth letters mapped to their ASCII forms, NFC) for
// validating, without its case mapping (Key folds case for comparing) and
// without its Bidi Rule, which checkName applies as the RFC says.
var nameProfile = precis.NewIdentifier(precis.FoldWidth, precis.Norm(norm.NFC))

var reserved = map[string]bool{Key(wire.ServerName): true, Key(wire.Everyone): true}

// Key is the form in which two names that a reader cannot tell apart are
// equal: compatibility-normalised (NFKC: "ｓｅｒｖｅｒ" is "server") and
// case-folded ("SERVER" is "server"). The discovery server gives a key to the
// first name that has it. (Letters of other scripts that look alike, such as
// Cyrillic "а" for Latin "a", differ here: Validate refuses a name that mixes
// them with Latin ones, see checkScripts.)
func Key(name string) string {
	return cases.Fold().String(norm.NFKC.String(name))
}

// Line is u as one line of users.txt, '\n' included.
func (u User) Line() string {
	return fmt.Sprintf("%s %s %s %d\n", u.Name, u.Password, u.IP, u.Port)
}

// ParseLine parses one line (without its '\n'). Fields may be separated by
// any run of spaces or tabs, as the original's `>>` extraction allowed.
func ParseLine(line string) (User, error) {
	f := strings.Fields(line)
	if len(f) != 4 {
		return User{}, fmt.Errorf("%w: want 4 fields (name password ip port), got %d", ErrInvalid, len(f))
	}
	port, err := strconv.Atoi(f[3])
	if err != nil {
		return User{}, fmt.Errorf("%w: port %q is not a number", ErrInvalid, f[3])
	}
	u := User{Name: f[0], Password: f[1], IP: f[2], Port: port}
	return u, u.Validate()
}

// File is the parsed content of a users file.
type File struct {
	// Users in file order, at most MaxUsers. A name may appear more than once
	// in a file written by the original server; see Index.
	Users []User
	// Whole is the length of the file's whole lines: up to its last '\n'.
	Whole int64
	// Size is how many bytes were read: the file's length, unless it is over
	// MaxFileSize (then only its start was read).
	Size int64
	// Unterminated says that the last line has no '\n' and is a valid user,
	// the last of Users: a file edited by hand, or an append cut short inside
	// its port number (a cut anywhere else leaves fewer than four fields, and
	// the line is skipped). A writer must add the '\n' before it appends
	// (Repair does).
	Unterminated bool
	// Skipped counts the lines that were not valid users (each one logged).
	Skipped int
}

// Read parses a users file. A line that is not a valid user is skipped and
// logged (with its number) on log, and costs nothing else: the users before
// and after it are read. Blank lines are skipped silently. Read reads at most
// MaxFileSize bytes and keeps at most MaxUsers users, and says so in the log
// when the file holds more. The error is that of r only.
func Read(r io.Reader, log *slog.Logger) (File, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return File{}, err
	}
	p := newParser(log)
	atEOF := true
	if len(b) > MaxFileSize {
		p.log.Warn("users file: over the size limit; reading only its start", "limit", MaxFileSize)
		b, atEOF = b[:MaxFileSize], false
	}
	var f File
	add := func(u User) {
		if len(f.Users) < MaxUsers {
			f.Users = append(f.Users, u)
		} else {
			p.full()
		}
	}
	used, rest := p.feed(b, add)
	f.Whole, f.Size, f.Skipped = int64(used), int64(len(b)), p.skipped
	if atEOF && len(rest) > 0 {
		if u, ok := p.tail(rest); ok {
			add(u)
			f.Unterminated = true
		}
		f.Skipped = p.skipped
	}
	return f, nil
}

// Load reads the users file at path (see Read). A missing file is an empty
// store.
func Load(path string, log *slog.Logger) (File, error) {
	fh, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return File{}, nil
	}
	if err != nil {
		return File{}, err
	}
	defer fh.Close()
	if log == nil {
		log = slog.Default()
	}
	f, err := Read(fh, log.With("file", path))
	if err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Repair makes file, which holds f, ready for appending, and returns its
// length afterwards. A last line without '\n' is mended: given its '\n' when
// it is a valid user (f.Unterminated), cut off when it is not (it is the trace
// of a write that a crash cut short, and the next line would be glued to it).
// The change is synced before Repair returns. A file over MaxFileSize is left
// as it is.
func (f File) Repair(file AppendFile, log *slog.Logger) (int64, error) {
	st, err := file.Stat()
	if err != nil {
		return 0, err
	}
	if log == nil {
		log = slog.Default()
	}
	switch {
	case st.Size() != f.Size || f.Size == f.Whole:
		return st.Size(), nil // nothing to mend, or a file too big to have been read whole
	case f.Unterminated:
		log.Warn("users file: last line had no newline; added one", "file", file.Name())
		if _, err = file.Seek(0, io.SeekEnd); err == nil {
			_, err = file.Write([]byte("\n"))
		}
		f.Size++
	default:
		log.Warn("users file: cut off a torn last line", "file", file.Name(), "bytes", f.Size-f.Whole)
		err = file.Truncate(f.Whole)
		f.Size = f.Whole
	}
	if err == nil {
		err = file.Sync()
	}
	if err != nil {
		return 0, fmt.Errorf("mending the last line of %s: %w", file.Name(), err)
	}
	return f.Size, nil
}

// Index maps names to users. The first line for a name wins: the course's
// servers never write a second one (a name belongs to whoever registered it
// first), and a file written by the original, which appended duplicates and
// let the last one win, is read under the same rule.
func Index(list []User) map[string]User {
	m := make(map[string]User, len(list))
	for _, u := range list {
		if _, ok := m[u.Name]; !ok {
			m[u.Name] = u
		}
	}
	return m
}

// maxLogged bounds the lines a parser logs one by one: a file of a million
// bad lines must not become a million log lines.
const maxLogged = 20

// parser is the one parser of the format, for Read (a whole file) and Cache
// (a file read piece by piece as it grows).
type parser struct {
	log      *slog.Logger
	line     int  // lines seen so far
	skipping bool // inside a line longer than MaxLine: drop bytes up to its '\n'
	skipped  int
	isFull   bool
}

func newParser(log *slog.Logger) *parser {
	if log == nil {
		log = slog.Default()
	}
	return &parser{log: log}
}

// feed parses the whole lines at the front of b, calls add for each valid
// user, and returns how many bytes they took and the rest (the start of a
// line whose '\n' has not come yet).
func (p *parser) feed(b []byte, add func(User)) (used int, rest []byte) {
	for {
		rest = b[used:]
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			if !p.skipping && len(rest) < MaxLine {
				return used, rest
			}
			if !p.skipping {
				p.line++
				p.bad(fmt.Errorf("%w: longer than %d bytes", ErrInvalid, MaxLine))
				p.skipping = true
			}
			return len(b), nil // dropped up to here; the rest of the line follows
		}
		line := rest[:i]
		used += i + 1
		if p.skipping {
			p.skipping = false
			continue
		}
		p.line++
		if u, ok := p.parse(line); ok {
			add(u)
		}
	}
}

// tail parses a last line that has no '\n'. A line that is not valid is
// logged as torn.
func (p *parser) tail(rest []byte) (User, bool) {
	if p.skipping || len(bytes.TrimSpace(rest)) == 0 {
		return User{}, false
	}
	line := p.line + 1 // not counted: a Cache parses it again once its '\n' comes
	u, err := ParseLine(string(rest))
	if err != nil {
		p.skipped++
		p.log.Warn("users file: torn last line (no newline) skipped", "line", line, "err", err)
		return User{}, false
	}
	p.log.Warn("users file: last line has no newline; kept", "line", line, "user", u.Name)
	return u, true
}

func (p *parser) parse(line []byte) (User, bool) {
	if len(line)+1 > MaxLine {
		p.bad(fmt.Errorf("%w: longer than %d bytes", ErrInvalid, MaxLine))
		return User{}, false
	}
	text := string(bytes.TrimSuffix(line, []byte{'\r'}))
	if strings.TrimSpace(text) == "" {
		return User{}, false
	}
	u, err := ParseLine(text)
	if err != nil {
		p.bad(err)
		return User{}, false
	}
	return u, true
}

func (p *parser) bad(err error) {
	p.skipped++
	switch {
	case p.skipped <= maxLogged:
		p.log.Warn("users file: line skipped", "line", p.line, "err", err)
	case p.skipped == maxLogged+1:
		p.log.Warn("users file: more lines skipped; not logging each", "after", maxLogged)
	}
}

func (p *parser) full() {
	if !p.isFull {
		p.isFull = true
		p.log.Warn("users file: more users than the limit; the rest are ignored", "limit", MaxUsers)
	}
}

// AppendFile is what a writer of the users file needs of it: *os.File, or
// in a test a file that fails or counts its syncs on purpose (the only way to
// check that a writer syncs, and cleans up after a failed write).
type AppendFile interface {
	io.Writer
	io.Seeker
	Sync() error
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
	Name() string
	Close() error
}

// OpenAppend opens the users file at path for appending, creating it if it
// does not exist: the default way a writer opens it.
func OpenAppend(path string) (AppendFile, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
}
