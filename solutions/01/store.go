package discovery

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"serverlab/tools/given/users"
)

// ErrTaken is returned by Register for a name that is already registered with
// another password, or that a reader cannot tell from one that is ("Alice"
// beside "alice"). The original appended the new line anyway and let the last
// one win, so anyone could take over an account; here a name belongs to
// whoever registered it first.
var ErrTaken = errors.New("name already registered with another password")

// ErrFull is returned by Register once the file holds users.MaxUsers users:
// without a bound, unauthenticated registrations grow the file, and every
// reader of it, without end.
var ErrFull = errors.New("users file is full")

// Store is the user store: users.txt on disk, and an index of it in memory.
// It is safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	file  users.AppendFile // opened for appending
	size  int64            // length of the file's whole lines
	index map[string]users.User
	keys  map[string]string // users.Key of each name → the name that has it
}

// StoreOptions configure OpenStore. The zero value is usable.
type StoreOptions struct {
	// Logger receives what the store has to say about the file: lines it
	// skipped, a last line it mended (default slog.Default()).
	Logger *slog.Logger
	// Open opens the file for appending (default users.OpenAppend). Tests
	// pass one whose writes or syncs fail, to see what Register does then.
	Open func(path string) (users.AppendFile, error)
}

// OpenStore loads the users file at path, creating it if it does not exist,
// and opens it for appending.
//
// A line that is not a valid user is skipped and logged (users.Load): it
// costs that line only. A last line without '\n' is mended by
// users.File.Repair: given its '\n' if it is a valid user, cut off if it is
// the torn remainder of an append that a crash interrupted, so that the next
// registration starts on a line of its own.
func OpenStore(path string, opt StoreOptions) (*Store, error) {
	if opt.Open == nil {
		opt.Open = users.OpenAppend
	}
	f, err := users.Load(path, opt.Logger)
	if err != nil {
		return nil, err
	}
	file, err := opt.Open(path)
	if err != nil {
		return nil, err
	}
	size, err := f.Repair(file, opt.Logger)
	if err != nil {
		file.Close()
		return nil, err
	}
	s := &Store{file: file, size: size, index: users.Index(f.Users), keys: map[string]string{}}
	for _, u := range f.Users {
		if _, ok := s.keys[users.Key(u.Name)]; !ok {
			s.keys[users.Key(u.Name)] = u.Name
		}
	}
	return s, nil
}

// Register records u. A new name is appended to the file, which is synced
// before Register returns, so a user who was told OK survives a crash. The same
// name with the same password is accepted again without writing anything;
// with another password it fails with ErrTaken, as does a name that looks
// like one registered already (users.Key). An invalid user (see
// users.User.Validate) is refused and nothing is written; so is a new user
// once the file is full (ErrFull).
func (s *Store) Register(u users.User) error {
	if err := u.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.index[u.Name]; ok {
		if subtle.ConstantTimeCompare([]byte(old.Password), []byte(u.Password)) != 1 {
			return fmt.Errorf("%q: %w", u.Name, ErrTaken)
		}
		return nil
	}
	if other, ok := s.keys[users.Key(u.Name)]; ok {
		return fmt.Errorf("%q looks like %q: %w", u.Name, other, ErrTaken)
	}
	line := u.Line()
	if len(s.index) >= users.MaxUsers || s.size+int64(len(line)) > users.MaxFileSize {
		return fmt.Errorf("%w: %d users", ErrFull, len(s.index))
	}
	if err := s.appendLine(line); err != nil {
		return err
	}
	s.size += int64(len(line))
	s.index[u.Name] = u
	s.keys[users.Key(u.Name)] = u.Name
	return nil
}

// appendLine writes line and syncs it. If either fails, whatever part of the
// line reached the file is cut off again, so that the file keeps only whole
// lines and the caller can report the failure and carry on.
func (s *Store) appendLine(line string) error {
	_, err := s.file.Write([]byte(line))
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
