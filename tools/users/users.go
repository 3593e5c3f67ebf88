// Package users reads and writes users.txt, the user store of the chat
// protocol v1 servers (docs/protocols.md §1): one user per line,
//
//	<username> <password> <ip> <port>
//
// with plaintext passwords, as in the original (chapter 01's lesson says why
// that is bad; a real system stores a slow password hash). The discovery server of chapter 01 appends
// to it and the chat servers of chapters 02 and 05 read it, so its format has
// one home here.
package users

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"

	"serverlab/tools/wire"
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

// Validate checks that u can be stored and read back: the file is split on
// white space, so no field may contain any, and a name must fit the 31 bytes
// that a chat frame has room for.
func (u User) Validate() error {
	if err := checkField("name", u.Name, wire.MaxName); err != nil {
		return err
	}
	if err := checkField("password", u.Password, 0); err != nil {
		return err
	}
	if err := checkField("ip", u.IP, 0); err != nil {
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
	case max > 0 && len(s) > max:
		return fmt.Errorf("%w: %s is %d bytes (limit %d)", ErrInvalid, what, len(s), max)
	case strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == 0 }) >= 0:
		return fmt.Errorf("%w: %s %q contains white space or NUL", ErrInvalid, what, s)
	}
	return nil
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
	// Users in file order. A name may appear more than once in a file written
	// by the original server; see Index.
	Users []User
	// Whole is the length of the file's whole lines. When it is shorter than
	// the file, the last line has no '\n': the trace of a write that a crash
	// cut short. It is not in Users, and a writer should truncate the file to
	// Whole before appending, or the next line would be glued to it.
	Whole int64
}

// Read parses a users file. Blank lines are skipped; any other malformed
// line is an error naming its line number.
func Read(r io.Reader) (File, error) {
	var f File
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return f, nil // a non-empty remainder is a torn line: left out of Whole
		}
		if err != nil {
			return f, err
		}
		f.Whole += int64(len(line))
		text := string(bytes.TrimRight(line, "\r\n"))
		if strings.TrimSpace(text) == "" {
			continue
		}
		u, err := ParseLine(text)
		if err != nil {
			return f, fmt.Errorf("line %d: %w", n, err)
		}
		f.Users = append(f.Users, u)
	}
}

// Load reads the users file at path. A missing file is an empty store.
func Load(path string) (File, error) {
	fh, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return File{}, nil
	}
	if err != nil {
		return File{}, err
	}
	defer fh.Close()
	f, err := Read(fh)
	if err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
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
