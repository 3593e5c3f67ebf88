//go:build !linux

package chatload

import (
	"context"
	"errors"
)

const epollSupported = false

// receiveEpoll is Linux only; CheckEngine refuses Epoll elsewhere.
func receiveEpoll(context.Context, *runState, []*client, []int64, <-chan struct{}) (int64, error) {
	return 0, errors.New("-engine epoll works on Linux only")
}
