//go:build !unix

package chattest

import "serverlab/tests/testkit"

// checkSlowUsersFile needs a FIFO (Unix).
func checkSlowUsersFile(k *testkit.T, impl Impl) {}

// checkHalfClosedNotReading needs socket options (Unix).
func checkHalfClosedNotReading(k *testkit.T, impl Impl) {}

// checkUnreadableUsersFile needs a Unix file system.
func checkUnreadableUsersFile(k *testkit.T, impl Impl) {}

// checkLoginAnsweredLate needs a FIFO (Unix).
func checkLoginAnsweredLate(k *testkit.T, impl Impl) {}

// checkQueryRefreshLockFree needs a FIFO (Unix).
func checkQueryRefreshLockFree(k *testkit.T, impl Impl) {}
