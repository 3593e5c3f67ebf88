//go:build judge

package chat_test

import (
	"serverlab/tests/chattest"
	"serverlab/tests/judge"
)

// Under tools/cmd/grade the checks run in the judge, a process without the
// student's code, and every call of an Impl function goes to the subject
// that has it (see tests/judge).
var (
	impl = judge.Remote(chattest.Impl{SlowsSender: true, GoroutinePerClient: true})
)
