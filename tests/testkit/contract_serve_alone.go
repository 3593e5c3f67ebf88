package testkit

import "testing"

// CheckServeRules runs the contract's rules that ask nothing of closing a
// connection under way (close-after-close, accept-errors-retried), as
// subtests: for the exercise whose TODO asks them of Serve and Close when
// the whole contract is another exercise's check (chapter 01: Serve and the
// first Close are 1.4's, closing the connection being served 1.6's). The
// rules that hold a client connected while Close runs (close-waits …) stay
// with the contract: an iterative server without 1.6 serves that client
// until its deadline. A failure then names the exercise that owns the rule.
func (k *T) CheckServeRules(c Contract) {
	k.Helper()
	k.Run("close-after-close", func(t *testing.T) { checkCloseAfterClose(New(t, k.exercise), c) })
	k.Run("accept-errors-retried", func(t *testing.T) { checkAcceptRetried(New(t, k.exercise), c) })
}
