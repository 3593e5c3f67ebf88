//go:build !linux

package main

import (
	"context"
	"errors"
	"net"
)

func serveRaw(ctx context.Context, addr string, n int, resp []byte) error {
	return errors.New("-mode raw works on Linux only")
}

// deferAccept does nothing where TCP_DEFER_ACCEPT does not exist.
func deferAccept(fd uintptr) {}

// answerFile is Linux's (file_linux.go); elsewhere -file is refused before
// any connection is accepted.
func answerFile(c net.Conn, path string) { c.Close() }
