package chatcoretest

import (
	"serverlab/tests/chatcoretest/hostile"
	"serverlab/tests/testkit"
)

// chatFlood runs the hostile suite's check of each user's budget of chat
// bytes (hostile.ChatFlood) on one server of impl: part of exercise 7.4,
// which stores the chat messages.
func chatFlood(k *testkit.T, impl Impl) {
	k.Helper()
	hostile.ChatFlood(k, hostile.OneServer(hostileStart(impl)))
}
