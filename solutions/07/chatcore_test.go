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
		var store chatcore.Store
		if c.FailAppends != nil {
			sq, err := chatcore.NewSQLiteStore(c.DBPath, nil)
			if err != nil {
				return nil, err
			}
			store = failingStore{Store: sq, fail: c.FailAppends}
		}
		return chatcore.New(chatcore.Config{
			Store:        store,
			DBPath:       c.DBPath,
			MaxPending:   c.MaxPending,
			LoginTimeout: c.LoginTimeout,
			IdleTimeout:  c.IdleTimeout,
			CommitWindow: c.CommitWindow,
			WriteTimeout: c.WriteTimeout,
			Admins:       c.Admins,
			TLS:          c.TLS,
			OnCommit:     c.OnCommit,
			Hash:         hashParams(c.SlowHash),
			Logger:       c.Logger,
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

func TestMain(m *testing.M) { testkit.Main(m) }

func TestEx7_1_Frames(t *testing.T)       { chatcoretest.Frames(t, impl) }
func TestEx7_2_Users(t *testing.T)        { chatcoretest.Users(t, impl) }
func TestEx7_3_Channels(t *testing.T)     { chatcoretest.Channels(t, impl) }
func TestEx7_4_History(t *testing.T)      { chatcoretest.History(t, impl) }
func TestEx7_5_BackPressure(t *testing.T) { chatcoretest.BackPressure(t, impl) }
func TestEx7_6_Liveness(t *testing.T)     { chatcoretest.Liveness(t, impl) }
func TestEx7_7_Shutdown(t *testing.T)     { chatcoretest.Shutdown(t, impl) }
