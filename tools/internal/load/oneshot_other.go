//go:build !linux

package load

import "context"

// Run returns ErrOneShotUnsupported: the event loops use Linux's epoll.
func (o OneShot) Run(ctx context.Context) (Result, error) {
	return Result{}, ErrOneShotUnsupported
}
