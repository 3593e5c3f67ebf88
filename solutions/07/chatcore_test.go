package chatcore_test

import (
	"testing"

	chatcore "serverlab/solutions/07"
	"serverlab/tests/chatcoretest"
	"serverlab/tests/testkit"
	"serverlab/tools/lab"
)

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

func TestMain(m *testing.M) { testkit.Main(m) }

func TestEx7_1_Frames(t *testing.T)       { chatcoretest.Frames(t, impl) }
func TestEx7_2_Users(t *testing.T)        { chatcoretest.Users(t, impl) }
func TestEx7_3_Channels(t *testing.T)     { chatcoretest.Channels(t, impl) }
func TestEx7_4_History(t *testing.T)      { chatcoretest.History(t, impl) }
func TestEx7_5_BackPressure(t *testing.T) { chatcoretest.BackPressure(t, impl) }
func TestEx7_6_Liveness(t *testing.T)     { chatcoretest.Liveness(t, impl) }
func TestEx7_7_Shutdown(t *testing.T)     { chatcoretest.Shutdown(t, impl) }
