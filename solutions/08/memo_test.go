package chatscale

import "testing"

// TestLoginMemoForgetsWhatALoginInFlightLearned: a password proved against
// a users bucket that was wiped while the hash ran is not remembered after
// forgetUsers: the new bucket hands its id to someone else.
func TestLoginMemoForgetsWhatALoginInFlightLearned(t *testing.T) {
	var lm loginMemo
	lm.init()
	gen := lm.generation() // the login reads the old bucket
	lm.forget()            // the store is wiped meanwhile (forgetUsers)
	lm.remember(gen, 1, "old password")
	if lm.recall(1, "old password") {
		t.Fatal("a login that began before forget remembered its password after it: user 1 of the new " +
			"bucket could be logged into with the old user's password")
	}
	lm.remember(lm.generation(), 1, "new password")
	if !lm.recall(1, "new password") {
		t.Fatal("a login after forget was not remembered")
	}
}
