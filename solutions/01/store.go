package discovery

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"serverlab/tools/users"
)

// ErrTaken is returned by Register for a name that is already registered with
// another password. The original appended the new line anyway and let the last
// one win, so anyone could take over an account; here a name belongs to
// whoever registered it first.
var ErrTaken = errors.New("name already registered with another password")

// Store is the user store: users.txt on disk, and an index of it in memory.
// It is safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	file  *os.File // opened for appending
	size  int64    // length of the file's whole lines
	index map[string]users.User
}

// OpenStore loads the users file at path, creating it if it does not exist,
// and opens it for appending.
//
// A last line without '\n' is what a crash in the middle of an append leaves
// behind; it is cut off, so that the next registration starts on a line of its
// own. Any other malformed line is an error: better to refuse to start than to
// lose users silently.
func OpenStore(path string) (*Store, error) {
	f, err := users.Load(path)
	if err != nil {
		return nil, err
	}
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	if err := file.Truncate(f.Whole); err != nil {
		file.Close()
		return nil, fmt.Errorf("cutting off a torn last line: %w", err)
	}
	return &Store{file: file, size: f.Whole, index: users.Index(f.Users)}, nil
}

// Register records u. A new name is appended to the file, which is synced
// before Register returns, so a user who was told OK survives a crash. The same
// name with the same password is accepted again without writing anything;
// with another password it fails with ErrTaken.
func (s *Store) Register(u users.User) error {
	if err := u.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.index[u.Name]; ok {
		if old.Password != u.Password {
			return fmt.Errorf("%q: %w", u.Name, ErrTaken)
		}
		return nil
	}
	line := u.Line()
	if err := s.appendLine(line); err != nil {
		return err
	}
	s.size += int64(len(line))
	s.index[u.Name] = u
	return nil
}

// appendLine writes line and syncs it. If either fails, whatever part of the
// line reached the file is cut off again, so that the file keeps only whole
// lines and the caller can report the failure and carry on.
func (s *Store) appendLine(line string) error {
	_, err := s.file.WriteString(line)
	if err == nil {
		err = s.file.Sync()
	}
	if err != nil {
		return errors.Join(err, s.file.Truncate(s.size))
	}
	return nil
}

// Lookup returns the user registered under name.
func (s *Store) Lookup(name string) (users.User, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.index[name]
	return u, ok
}

// Close closes the file.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.file.Close()
}
