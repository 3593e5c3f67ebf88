//go:build linux && !judge

package evloop_test

import (
	evloop "serverlab/chapters/05"
	"serverlab/tests/chattest"
	"serverlab/tests/epolltest"
	"serverlab/tests/stocktest"
	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

// The chapter's Impl values: the code under test, in this process under
// go test, in the subject under tools/cmd/grade (see tests/judge).

// loop sets the loop's limits from the suite's.
func loop(l epolltest.Limits) evloop.Options {
	return evloop.Options{HighWater: l.HighWater, MaxPending: l.MaxPending, StallTimeout: l.StallTimeout,
		Logger: testkit.Logger()}
}

// impl hands this chapter's package to the suite in tests/epolltest.
var impl = epolltest.Impl{
	DrainFrames: evloop.DrainFrames,
	DrainLines:  evloop.DrainLines,
	NewEcho: func(c epolltest.EchoConfig) (lab.Server, error) {
		return evloop.NewEcho(evloop.EchoConfig{Repeat: c.Repeat, GreetTimeout: c.GreetTimeout, Loop: loop(c.Limits)}), nil
	},
}

// chatImpl hands the chat server on the loop to chapter 02's suite,
// tests/chattest, which it passes unchanged.
var chatImpl = chattest.Impl{
	NewServer: func(c chattest.Config) (lab.Server, error) {
		opt := loop(epolltest.Limits{MaxPending: c.MaxPending})
		opt.Logger = c.Logger
		return evloop.NewChat(evloop.ChatConfig{UsersPath: c.UsersPath, LoginTimeout: c.LoginTimeout, Loop: opt})
	},
}

// stockImpl hands the stock server on the loop to chapter 04's suite,
// tests/stocktest: the server checks only (no tree, lock or pool of its own).
var stockImpl = stocktest.Impl{
	NewServer: func(c stocktest.Config) (lab.Server, error) {
		return evloop.NewStock(evloop.StockConfig{
			StockPath:    c.StockPath,
			SyncInterval: c.SyncInterval,
			OnSync:       c.OnSync,
			Saver:        c.Saver,
			Loop:         evloop.Options{Logger: c.Logger},
		})
	},
}
