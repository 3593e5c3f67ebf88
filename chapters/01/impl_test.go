//go:build !judge

package discovery_test

import (
	discovery "serverlab/chapters/01"
	"serverlab/tests/discoverytest"
	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
	"serverlab/tools/given/users"
)

// The chapter's Impl values: the code under test, in this process under
// go test, in the subject under tools/cmd/grade (see tests/judge).

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
		return discovery.New(discovery.Config{UsersPath: c.UsersPath, Timeout: c.Timeout, Logger: c.Logger,
			OpenUsers: c.OpenUsers})
	},
}
