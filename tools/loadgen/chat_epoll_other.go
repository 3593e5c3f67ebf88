//go:build !linux

package main

import (
	"context"
	"errors"
)

const epollSupported = false

// receiveEpoll is Linux only; checkEngine refuses -engine epoll elsewhere.
func receiveEpoll(context.Context, *chatRun, []*chatConn, int64, <-chan struct{}) (int64, error) {
	return 0, errors.New("-engine epoll works on Linux only")
}
