//go:build linux && judge

package evloop_test

import (
	"serverlab/tests/chattest"
	"serverlab/tests/epolltest"
	"serverlab/tests/judge"
	"serverlab/tests/stocktest"
)

// Under tools/cmd/grade the checks run in the judge, a process without the
// student's code, and every call of an Impl function goes to the subject
// that has it (see tests/judge).
var (
	impl      = judge.Remote(epolltest.Impl{})
	chatImpl  = judge.Remote(chattest.Impl{})
	stockImpl = judge.Remote(stocktest.Impl{})
)
