//go:build !judge

package chatcore_test

import (
	chatcore "serverlab/chapters/07"
	"serverlab/tests/chatcoretest"
	"serverlab/tools/given/chatcore/proto"
	"serverlab/tools/given/lab"
)

// The chapter's Impl values: the code under test, in this process under
// go test, in the subject under tools/cmd/grade (see tests/judge).

// impl hands this chapter's package to the suite in tests/chatcoretest.
var impl = chatcoretest.Impl{
	NewServer: func(c chatcoretest.Config) (lab.Server, error) {
		var store chatcore.Store
		if c.FailAppends != nil || c.FailStore != nil {
			sq, err := chatcore.NewSQLiteStore(c.DBPath, nil)
			if err != nil {
				return nil, err
			}
			store = failingStore{Store: sq, fail: c.FailAppends, failCall: c.FailStore}
		}
		return chatcore.New(chatcore.Config{
			Store:        store,
			DBPath:       c.DBPath,
			LoginTimeout: c.LoginTimeout,
			IdleTimeout:  c.IdleTimeout,
			CommitWindow: c.CommitWindow,
			MaxBatch:     c.MaxBatch,
			WriteTimeout: c.WriteTimeout,
			Admins:       c.Admins,
			TLS:          c.TLS,
			Hash:         hashParams(c.SlowHash, c.BurstHash),
			Logger:       c.Logger,
			Limits: chatcore.Limits{
				MaxPending:            c.MaxPending,
				MaxUserName:           c.MaxUserName,
				MaxChannelName:        c.MaxChannelName,
				MaxMessage:            c.MaxMessage,
				MaxChannels:           c.MaxChannels,
				MaxChannelsPerUser:    c.MaxChannelsPerUser,
				MaxChannelsPerAddress: c.MaxChannelsPerAddress,
				MaxStoreBytes:         c.MaxStoreBytes,
				MaxUserIDs:            c.MaxUserIDs,
				MaxLoginFailures:      c.MaxLoginFailures,
				AddressFailures:       c.AddressFailures,
				FailureWindow:         c.FailureWindow,
				HashWait:              c.HashWait,
				HashQueue:             c.HashQueue,
				AddressRegistrations:  c.AddressRegistrations,
				RegistrationWindow:    c.RegistrationWindow,
				MaxConnections:        c.MaxConnections,
				MaxConnsPerAddress:    c.MaxConnsPerAddress,
				MaxIdle:               c.MaxIdle,
				PreAuthBudget:         c.PreAuthBudget,
				InputBudget:           c.InputBudget,
				OutputBudget:          c.OutputBudget,
				HistoryReads:          c.HistoryReads,
				PresenceBurst:         c.PresenceBurst,
				PresenceRate:          c.PresenceRate,
				ChatBurst:             c.ChatBurst,
				ChatRate:              c.ChatRate,
			},
			Hooks: chatcore.Hooks{OnCommit: c.OnCommit},
		})
	},
	AddUser: func(c chatcoretest.Config, name, password string) error {
		s, err := chatcore.New(chatcore.Config{DBPath: c.DBPath, Hash: hashParams(false, false), Logger: c.Logger})
		if err != nil {
			return err
		}
		defer s.Close()
		return s.AddUser(name, password)
	},
}

// failingStore is a store whose calls fail when the suite says so: the
// suite's disk that fails in the middle of a run. fail is asked before each
// AppendMessages, failCall before each CreateUser, CreateChannel and History
// (with the method's name); either may be nil.
type failingStore struct {
	chatcore.Store
	fail     func() error
	failCall func(method string) error
}

func (f failingStore) AppendMessages(msgs []chatcore.NewMessage) ([]uint32, error) {
	if f.fail != nil {
		if err := f.fail(); err != nil {
			return nil, err
		}
	}
	return f.Store.AppendMessages(msgs)
}

// failed asks failCall about method.
func (f failingStore) failed(method string) error {
	if f.failCall == nil {
		return nil
	}
	return f.failCall(method)
}

func (f failingStore) CreateUser(name, hash string) (uint32, error) {
	if err := f.failed("CreateUser"); err != nil {
		return 0, err
	}
	return f.Store.CreateUser(name, hash)
}

func (f failingStore) CreateChannel(name string) (proto.Channel, bool, error) {
	if err := f.failed("CreateChannel"); err != nil {
		return proto.Channel{}, false, err
	}
	return f.Store.CreateChannel(name)
}

func (f failingStore) History(channel uint32, limit int) ([]proto.ChatMessage, error) {
	if err := f.failed("History"); err != nil {
		return nil, err
	}
	return f.Store.History(channel, limit)
}

// hashParams is a cheap hash (tests log in often), a slow one for the
// check that no password is hashed under the server's lock, or one of a few
// milliseconds for the check of a burst of registrations.
func hashParams(slow, burst bool) chatcore.HashParams {
	switch {
	case slow:
		return chatcore.HashParams{Time: 32, MemoryKiB: 4096, Threads: 1}
	case burst:
		return chatcore.HashParams{Time: 1, MemoryKiB: 4096, Threads: 1}
	}
	return chatcore.HashParams{Time: 1, MemoryKiB: 64, Threads: 1}
}
