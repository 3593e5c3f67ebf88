//go:build !judge

package chatscale_test

import (
	chatscale "serverlab/chapters/08"
	"serverlab/tests/chatscaletest"
	"serverlab/tools/given/lab"
)

// The chapter's Impl values: the code under test, in this process under
// go test, in the subject under tools/cmd/grade (see tests/judge).

// impl hands this chapter's package to the suite in tests/chatscaletest.
var impl = chatscaletest.Impl{
	NewServer: func(c chatscaletest.Config) (lab.Server, error) {
		return chatscale.New(chatscale.Config{
			DBPath:         c.DBPath,
			NATSURL:        c.NATSURL,
			Replicas:       c.Replicas,
			PublishTimeout: c.PublishTimeout,
			RequestTimeout: c.RequestTimeout,
			SessionTTL:     c.SessionTTL,
			MaxStreamBytes: c.MaxStreamBytes,
			HashIterations: c.HashIterations,
			Logger:         c.Logger,

			LoginTimeout: c.LoginTimeout,
			IdleTimeout:  c.IdleTimeout,
			WriteTimeout: c.WriteTimeout,
			Limits: chatscale.Limits{
				MaxConnections:        c.MaxConnections,
				MaxConnsPerAddress:    c.MaxConnsPerAddress,
				PreAuthBudget:         c.PreAuthBudget,
				InputBudget:           c.InputBudget,
				OutputBudget:          c.OutputBudget,
				HistoryReads:          c.HistoryReads,
				MaxPending:            c.MaxPending,
				MaxChannels:           c.MaxChannels,
				MaxChannelsPerUser:    c.MaxChannelsPerUser,
				MaxChannelsPerAddress: c.MaxChannelsPerAddress,
				AddressFailures:       c.AddressFailures,
				FailureWindow:         c.FailureWindow,
				MaxMessage:            c.MaxMessage,
				PresenceBurst:         c.PresenceBurst,
				PresenceRate:          c.PresenceRate,
				ChatBurst:             c.ChatBurst,
				ChatRate:              c.ChatRate,
				HashWait:              c.HashWait,
			},
		})
	},
}
