//go:build !linux

package main

import (
	"context"
	"errors"
)

func serveRaw(ctx context.Context, addr string, n int, resp []byte) error {
	return errors.New("-mode raw works on Linux only")
}

// deferAccept does nothing where TCP_DEFER_ACCEPT does not exist.
func deferAccept(fd uintptr) {}
