package chatcore

import (
	"errors"
	"fmt"
)

// grantAdmins gives the right to stop the server to the names of Admins
// whose accounts exist now, when the server starts. Registration is open
// to anyone, so a name on the list that has no account yet would belong to
// whoever registers it first: on a fresh database with -admins admin, the
// first stranger to create "admin". Such a name is refused and logged; the
// operator creates the account beforehand (AddUser, chatcore-server
// -add-user) and restarts. A separate admin password would do as well, but
// would be one more secret to store and a second login path to get right;
// this way an administrator is an ordinary user whose account the operator
// made.
func (s *Server) grantAdmins(names []string) {
	for _, name := range names {
		if _, ok := s.users[name]; !ok {
			s.log.Warn("not an administrator: no such account at start-up (create it with -add-user, then restart)", "name", name)
			continue
		}
		s.admins[name] = true
	}
}

// AddUser creates an account directly in the store, as an operator does
// before starting the server (for an administrator, see grantAdmins). It
// checks the name like a registration and stores only the password's hash.
func (s *Server) AddUser(name, password string) error {
	if !validName(name, s.cfg.Limits.MaxUserName) {
		return fmt.Errorf("invalid user name %q: 1 to %d bytes of letters, digits, marks, punctuation or symbols", name, s.cfg.Limits.MaxUserName)
	}
	hash, err := s.hashPassword(password)
	if err != nil {
		return err
	}
	if _, err := s.store.CreateUser(name, hash); errors.Is(err, ErrExists) {
		return fmt.Errorf("user %q exists already", name)
	} else if err != nil {
		return err
	}
	return nil
}
