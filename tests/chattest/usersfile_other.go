//go:build !unix

package chattest

import "serverlab/tests/testkit"

// checkSlowUsersFile needs a FIFO (Unix).
func checkSlowUsersFile(k *testkit.T, impl Impl) {}
