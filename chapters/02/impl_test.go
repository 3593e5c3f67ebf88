//go:build !judge

package chat_test

import (
	chat "serverlab/chapters/02"
	"serverlab/tests/chattest"
	"serverlab/tools/given/lab"
)

// The chapter's Impl values: the code under test, in this process under
// go test, in the subject under tools/cmd/grade (see tests/judge).

// impl hands this chapter's package to the suite in tests/chattest.
var impl = chattest.Impl{
	NewServer: func(c chattest.Config) (lab.Server, error) {
		return chat.New(chat.Config{
			UsersPath:    c.UsersPath,
			MaxPending:   c.MaxPending,
			LoginTimeout: c.LoginTimeout,
			StallTimeout: c.StallTimeout,
			Logger:       c.Logger,
		})
	},
	SlowsSender:        true, // a full outbox slows the sender down (Config.StallTimeout)
	GoroutinePerClient: true, // a login runs on its connection's goroutine
}
