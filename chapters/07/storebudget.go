package chatcore

import (
	"sync/atomic"
)

// storeBudget bounds what the chat messages may make the store hold
// (Limits.MaxStoreBytes). Without it 64 users of one address stored 130 MB
// in 22 s (attacker5's F4: 512 users an hour, each 64 KiB/s, is 32 MiB/s
// from one address, and the disk fills for everyone); chapter 08's stream
// has a budget (MaxStreamBytes), and a store without one is the same hole.
// It starts at the store's size on disk (SizedStore, when the store can
// tell) and grows by each stored message's content and messageOverhead,
// counted by meteredStore after the store call returned, so that a message
// refused for another reason costs it nothing. Once it is spent a chat
// message is refused Message not stored. before it reaches the committer
// (admit): the same answer as a full stream in chapter 08, and it says what
// happened — the message is not stored. Logins, registrations and channels
// are not refused: they are small, and their own caps bound them. Messages
// are never deleted, so only the operator makes room (and restarts).
//
// Many connections may pass the check at once before their messages are
// counted: the store may pass the budget by one message per connection
// (at most MaxConnections × MaxMessage).
type storeBudget struct {
	limit int64
	used  atomic.Int64
}

// full reports whether a message of n content bytes does not fit.
func (b *storeBudget) full(n int) bool {
	return b.used.Load()+int64(n)+messageOverhead > b.limit
}

// messageOverhead is what one message costs the store besides its content:
// its row (ids, lengths) and its index entries, about.
const messageOverhead = 64

// SizedStore is a Store that can tell how many bytes it holds: the store
// budget starts there.
type SizedStore interface {
	Size() (int64, error)
}

// meteredStore counts the bytes of the messages its Store stored.
type meteredStore struct {
	Store
	budget *storeBudget
}

// AppendMessages stores msgs and, once they are stored, counts them.
func (m meteredStore) AppendMessages(msgs []NewMessage) ([]uint32, error) {
	ids, err := m.Store.AppendMessages(msgs)
	if err == nil {
		var n int64
		for _, msg := range msgs {
			n += int64(len(msg.Content)) + messageOverhead
		}
		m.budget.used.Add(n)
	}
	return ids, err
}

// Size implements SizedStore: the database's pages (what the WAL holds
// committed included).
func (s *SQLiteStore) Size() (int64, error) {
	var pages, size int64
	if err := s.db.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		return 0, err
	}
	if err := s.db.QueryRow(`PRAGMA page_size`).Scan(&size); err != nil {
		return 0, err
	}
	return pages * size, nil
}
