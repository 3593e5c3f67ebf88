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
		return chatcore.New(chatcore.Config{
			DBPath:             c.DBPath,
			MaxPending:         c.MaxPending,
			LoginTimeout:       c.LoginTimeout,
			IdleTimeout:        c.IdleTimeout,
			CommitWindow:       c.CommitWindow,
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
			Hash:               chatcore.HashParams{Time: 1, MemoryKiB: 64, Threads: 1}, // cheap: tests log in often
			Logger:             c.Logger,
		})
	},
}
