//go:build !judge

package chatcore_test

import (
	chatcore "serverlab/solutions/07"
	"serverlab/tests/chatcoretest"
	"serverlab/tools/lab"
)

// The chapter's Impl values: the code under test, in this process under
// go test, in the subject under tools/grade (see tests/judge).

// impl hands this chapter's package to the suite in tests/chatcoretest.
var impl = chatcoretest.Impl{
	NewServer: func(c chatcoretest.Config) (lab.Server, error) {
		var store chatcore.Store
		if c.FailAppends != nil {
			sq, err := chatcore.NewSQLiteStore(c.DBPath, nil)
			if err != nil {
				return nil, err
			}
			store = failingStore{Store: sq, fail: c.FailAppends}
		}
		return chatcore.New(chatcore.Config{
			Store:              store,
			DBPath:             c.DBPath,
			MaxPending:         c.MaxPending,
			LoginTimeout:       c.LoginTimeout,
			IdleTimeout:        c.IdleTimeout,
			CommitWindow:       c.CommitWindow,
			MaxBatch:           c.MaxBatch,
			WriteTimeout:       c.WriteTimeout,
			Admins:             c.Admins,
			MaxUserName:        c.MaxUserName,
			MaxChannelName:     c.MaxChannelName,
			MaxMessage:         c.MaxMessage,
			MaxChannels:        c.MaxChannels,
			MaxChannelsPerUser: c.MaxChannelsPerUser,
			MaxUserIDs:         c.MaxUserIDs,
			MaxLoginFailures:   c.MaxLoginFailures,
			AddressFailures:    c.AddressFailures,
			FailureWindow:      c.FailureWindow,
			HashWait:           c.HashWait,
			HashQueue:          c.HashQueue,
			MaxConnections:     c.MaxConnections,
			MaxIdle:            c.MaxIdle,
			PreAuthBudget:      c.PreAuthBudget,
			TLS:                c.TLS,
			OnCommit:           c.OnCommit,
			Hash:               hashParams(c.SlowHash),
			Logger:             c.Logger,
		})
	},
}

// failingStore is a store whose AppendMessages fails when fail says so:
// the suite's disk that fails in the middle of a run.
type failingStore struct {
	chatcore.Store
	fail func() error
}

func (f failingStore) AppendMessages(msgs []chatcore.NewMessage) ([]uint32, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	return f.Store.AppendMessages(msgs)
}

// hashParams is a cheap hash (tests log in often), or a slow one for the
// check that no password is hashed under the server's lock.
func hashParams(slow bool) chatcore.HashParams {
	if slow {
		return chatcore.HashParams{Time: 32, MemoryKiB: 4096, Threads: 1}
	}
	return chatcore.HashParams{Time: 1, MemoryKiB: 64, Threads: 1}
}
