package chatcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sync"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"serverlab/tools/given/chatcore/proto"
	"serverlab/tools/given/filelock"
)

// schema is the original's three tables, unchanged, so that its databases
// open here (and ours there), plus what the course adds: the column of the
// password hash, and an index that makes History one index range scan.
//
// The original stored the password itself in chat_users.password. We keep
// the column (NOT NULL, so it holds ""), store the hash beside it, and at open
// hash every password that an old database still holds in plain text.
const schema = `
CREATE TABLE IF NOT EXISTS chat_users (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, password TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chat_channels (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS chat_messages (id INTEGER PRIMARY KEY, channel_id INTEGER NOT NULL,
  user_id INTEGER NOT NULL, content TEXT NOT NULL,
  FOREIGN KEY (channel_id) REFERENCES chat_channels(id) ON DELETE CASCADE,
  FOREIGN KEY (user_id) REFERENCES chat_users(id) ON DELETE CASCADE);
CREATE INDEX IF NOT EXISTS chat_messages_by_channel ON chat_messages(channel_id, id);
`

// SQLiteStore is the Store on an SQLite file (modernc.org/sqlite: pure Go,
// nothing to install). The database is in WAL mode with synchronous=FULL:
// a commit is fsynced before it returns, which is what makes an acknowledged
// message durable. (The original used synchronous=NORMAL, which in WAL mode
// may lose the last commits on a power cut, and kept messages in memory for
// up to a second before writing them at all.)
type SQLiteStore struct {
	db   *sql.DB
	lock *os.File // holds the exclusive lock on the file: one server per database (filelock)
	// writing lets one write at a time reach SQLite, which takes one writer
	// at a time anyway. Without it each of 300 registrations at once holds a
	// connection of the pool and waits in SQLite's busy handler, whose
	// timeout is a clock, not a queue: on a busy machine the 300 inserts
	// (an fsync each) outlast it, and the last ones fail as Storage failed.
	// A mutex is a queue; readers (WAL) never wait for it.
	writing sync.Mutex
}

// NewSQLiteStore opens (creating if needed) the database at path. hash
// turns a plain-text password of an old database into a stored hash; it may
// be nil if there is none to convert.
func NewSQLiteStore(path string, hash func(password string) (string, error)) (*SQLiteStore, error) {
	lock, err := filelock.Open(path)
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "foreign_keys(1)", "busy_timeout(10000)"} {
		q.Add("_pragma", p)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		lock.Close()
		return nil, err
	}
	s := &SQLiteStore{db: db, lock: lock}
	if err := s.init(hash); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return s, nil
}

func (s *SQLiteStore) init(hash func(string) (string, error)) error {
	if _, err := s.db.Exec(schema); err != nil {
		return err
	}
	var has int
	err := s.db.QueryRow(`SELECT count(*) FROM pragma_table_info('chat_users') WHERE name = 'password_hash'`).Scan(&has)
	if err != nil {
		return err
	}
	if has == 0 {
		if _, err := s.db.Exec(`ALTER TABLE chat_users ADD COLUMN password_hash TEXT NOT NULL DEFAULT ''`); err != nil {
			return err
		}
	}
	return s.hashPlainPasswords(hash)
}

// hashPlainPasswords converts the plain-text passwords an original database
// holds, so that after the first open none is left.
func (s *SQLiteStore) hashPlainPasswords(hash func(string) (string, error)) error {
	rows, err := s.db.Query(`SELECT id, password FROM chat_users WHERE password != ''`)
	if err != nil {
		return err
	}
	type plain struct {
		id int64
		pw string
	}
	var todo []plain
	for rows.Next() {
		var p plain
		if err := rows.Scan(&p.id, &p.pw); err != nil {
			rows.Close()
			return err
		}
		todo = append(todo, p)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	if len(todo) > 0 && hash == nil {
		return errors.New("the database holds plain-text passwords and no hash function was given")
	}
	for _, p := range todo {
		h, err := hash(p.pw)
		if err != nil {
			return err
		}
		if _, err := s.db.Exec(`UPDATE chat_users SET password = '', password_hash = ? WHERE id = ?`, h, p.id); err != nil {
			return err
		}
	}
	return nil
}

// Users implements Store.
func (s *SQLiteStore) Users() ([]StoredUser, error) {
	rows, err := s.db.Query(`SELECT id, name, password_hash FROM chat_users ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var users []StoredUser
	for rows.Next() {
		var u StoredUser
		if err := rows.Scan(&u.ID, &u.Name, &u.Hash); err != nil {
			return nil, err
		}
		users = append(users, u)
	}
	return users, rows.Err()
}

// CreateUser implements Store.
func (s *SQLiteStore) CreateUser(name, hash string) (uint32, error) {
	s.writing.Lock()
	defer s.writing.Unlock()
	res, err := s.db.Exec(`INSERT INTO chat_users (name, password, password_hash) VALUES (?, '', ?)`, name, hash)
	if isConstraint(err) {
		return 0, ErrExists
	}
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	return uint32(id), err
}

// Channels implements Store.
func (s *SQLiteStore) Channels() ([]proto.Channel, error) {
	rows, err := s.db.Query(`SELECT id, name FROM chat_channels ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var chs []proto.Channel
	for rows.Next() {
		var ch proto.Channel
		if err := rows.Scan(&ch.ID, &ch.Name); err != nil {
			return nil, err
		}
		chs = append(chs, ch)
	}
	return chs, rows.Err()
}

// CreateChannel implements Store.
func (s *SQLiteStore) CreateChannel(name string) (proto.Channel, bool, error) {
	s.writing.Lock()
	defer s.writing.Unlock()
	res, err := s.db.Exec(`INSERT INTO chat_channels (name) VALUES (?) ON CONFLICT(name) DO NOTHING`, name)
	if err != nil {
		return proto.Channel{}, false, err
	}
	if n, err := res.RowsAffected(); err == nil && n == 1 {
		id, err := res.LastInsertId()
		return proto.Channel{ID: uint32(id), Name: name}, true, err
	}
	ch := proto.Channel{Name: name}
	err = s.db.QueryRow(`SELECT id FROM chat_channels WHERE name = ?`, name).Scan(&ch.ID)
	return ch, false, err
}

// AppendMessages implements Store: one transaction, so one fsync of the WAL
// for the whole batch, however many messages it holds.
func (s *SQLiteStore) AppendMessages(msgs []NewMessage) (ids []uint32, err error) {
	s.writing.Lock()
	defer s.writing.Unlock()
	tx, err := s.db.BeginTx(context.Background(), nil)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, tx.Rollback())
		}
	}()
	stmt, err := tx.Prepare(`INSERT INTO chat_messages (channel_id, user_id, content) VALUES (?, ?, ?)`)
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	ids = make([]uint32, 0, len(msgs))
	for _, m := range msgs {
		res, err := stmt.Exec(m.Channel, m.User, m.Content)
		if err != nil {
			return nil, err
		}
		id, err := res.LastInsertId()
		if err != nil {
			return nil, err
		}
		ids = append(ids, uint32(id))
	}
	return ids, tx.Commit()
}

// History implements Store. It reads newest first and stops once the
// messages read pass what one frame can hold: the caller could not send
// more, and 285 messages of 1 MiB each (possible in a database from before
// the message limit) must not all be read into memory to answer one
// request. Ids come from SQLite's rowid, which is the
// largest id in the table plus one: messages are never deleted, so an id is
// never handed out twice, before or after a restart.
func (s *SQLiteStore) History(channel uint32, limit int) ([]proto.ChatMessage, error) {
	rows, err := s.db.Query(`SELECT id, user_id, content FROM chat_messages
		WHERE channel_id = ? ORDER BY id DESC LIMIT ?`, channel, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var msgs []proto.ChatMessage
	size := 0
	for size <= proto.MaxFrame && rows.Next() {
		var m proto.ChatMessage
		if err := rows.Scan(&m.ID, &m.UserID, &m.Content); err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
		size += len(m.Content) // stop reading once a frame could not hold more
	}
	slices.Reverse(msgs) // newest first from the index; the protocol wants oldest first
	return msgs, rows.Err()
}

// Close implements Store.
func (s *SQLiteStore) Close() error { return errors.Join(s.db.Close(), s.lock.Close()) }

// isConstraint reports whether err is SQLite's UNIQUE (or other constraint)
// violation.
func isConstraint(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}
