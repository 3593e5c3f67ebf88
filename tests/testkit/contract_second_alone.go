package testkit

import "testing"

// CheckSecondServe runs the contract's second-serve rule alone, as a
// subtest: for the exercise whose TODO asks it of Serve, when the whole
// contract is another exercise's check (chapter 01: Serve is 1.4's, the
// contract 1.6's). A failure then names the exercise that owns the rule.
func (k *T) CheckSecondServe(c Contract) {
	k.Helper()
	k.Run("second-serve", func(t *testing.T) { checkSecondServe(New(t, k.exercise), c) })
}
