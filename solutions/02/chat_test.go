package chat_test

import (
	"testing"

	chat "serverlab/solutions/02"
	"serverlab/tests/chattest"
	"serverlab/tests/testkit"
	"serverlab/tools/lab"
)

// impl hands this chapter's package to the suite in tests/chattest.
var impl = chattest.Impl{
	NewServer: func(c chattest.Config) (lab.Server, error) {
		return chat.New(chat.Config{
			UsersPath:    c.UsersPath,
			MaxPending:   c.MaxPending,
			LoginTimeout: c.LoginTimeout,
			Logger:       c.Logger,
		})
	},
	SlowsSender: true, // a full outbox slows the sender down (Config.StallTimeout)
}

func TestMain(m *testing.M) { testkit.Main(m) }

func TestEx2_1_Login(t *testing.T)          { chattest.Login(t, impl) }
func TestEx2_2_Broadcast(t *testing.T)      { chattest.Broadcast(t, impl) }
func TestEx2_3_PrivateMessage(t *testing.T) { chattest.PrivateMessage(t, impl) }
func TestEx2_4_UserQuery(t *testing.T)      { chattest.UserQuery(t, impl) }
func TestEx2_5_Isolation(t *testing.T)      { chattest.Isolation(t, impl) }
func TestEx2_6_Shutdown(t *testing.T)       { chattest.Shutdown(t, impl) }
