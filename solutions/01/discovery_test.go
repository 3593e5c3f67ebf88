package discovery_test

import (
	"testing"

	discovery "serverlab/solutions/01"
	"serverlab/tests/discoverytest"
	"serverlab/tests/testkit"
	"serverlab/tools/lab"
	"serverlab/tools/users"
)

// impl hands this chapter's package to the suite in tests/discoverytest.
var impl = discoverytest.Impl{
	ReadFrame:  discovery.ReadFrame,
	WriteFrame: discovery.WriteFrame,
	OpenStore: func(path string, open func(string) (users.AppendFile, error)) (discoverytest.Store, error) {
		return discovery.OpenStore(path, discovery.StoreOptions{Logger: testkit.Logger(), Open: open})
	},
	ErrTaken: discovery.ErrTaken,
	NewServer: func(c discoverytest.Config) (lab.Server, error) {
		if c.Logger == nil {
			c.Logger = testkit.Logger()
		}
		return discovery.New(discovery.Config{UsersPath: c.UsersPath, Timeout: c.Timeout, Logger: c.Logger})
	},
}

func TestMain(m *testing.M) { testkit.Main(m) }

func TestEx1_1_ReadFrame(t *testing.T)  { discoverytest.ReadFrame(t, impl) }
func TestEx1_2_WriteFrame(t *testing.T) { discoverytest.WriteFrame(t, impl) }
func TestEx1_3_UserStore(t *testing.T)  { discoverytest.UserStore(t, impl) }
func TestEx1_4_Serve(t *testing.T)      { discoverytest.Serve(t, impl) }
func TestEx1_5_Deadlines(t *testing.T)  { discoverytest.Deadlines(t, impl) }
func TestEx1_6_Close(t *testing.T)      { discoverytest.Close(t, impl) }

func FuzzReadFrame(f *testing.F) { discoverytest.FuzzReadFrame(f, impl) }
