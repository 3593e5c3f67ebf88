package chatcore

import (
	"errors"

	"serverlab/tools/given/chatcore/proto"
)

// Store is where the server keeps what must survive a restart: users,
// channels and chat messages. Channel membership and sessions are not in it:
// they live and die with connections.
//
// The server loads every user and channel at start and serves them from
// memory; it writes through the store when one is created. Messages go
// through AppendMessages, one transaction per batch (the group commit of
// exercise 7.4), and History reads them back.
//
// NewSQLiteStore is the implementation the course ships; the interface is
// what a test double or another backend implements.
type Store interface {
	// Users returns every user, with the password hash.
	Users() ([]StoredUser, error)
	// CreateUser adds a user and returns its id, or ErrExists if the name
	// is taken.
	CreateUser(name, hash string) (uint32, error)
	// Channels returns every channel, in ascending id order.
	Channels() ([]proto.Channel, error)
	// CreateChannel adds a channel, or returns the existing one of that
	// name with created false.
	CreateChannel(name string) (ch proto.Channel, created bool, err error)
	// AppendMessages stores msgs in one transaction and returns their ids,
	// in order. When it returns nil, every message is on disk (synced): it
	// survives a crash of the process and of the machine. Ids are never
	// reused, also not after a restart.
	AppendMessages(msgs []NewMessage) ([]uint32, error)
	// History returns the newest limit messages of channel, oldest first;
	// it may return fewer when more would not fit in one frame (1 MiB of
	// content).
	History(channel uint32, limit int) ([]proto.ChatMessage, error)
	// Close releases the store.
	Close() error
}

// StoredUser is a user as the store keeps it.
type StoredUser struct {
	ID   uint32
	Name string
	Hash string // the encoded password hash (see hashPassword); never the password
}

// NewMessage is a chat message on its way into the store.
type NewMessage struct {
	Channel uint32
	User    uint32
	Content string
}

// ErrExists is CreateUser's answer for a name that is taken.
var ErrExists = errors.New("chatcore: name exists")
