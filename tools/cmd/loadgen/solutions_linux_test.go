//go:build solutions && linux

package main

import (
	"log/slog"
	"testing"

	evloop "serverlab/solutions/05"
)

// startEvloopChat runs the chapter 05 reference server (Linux only) on
// usersPath until the test ends.
func startEvloopChat(t *testing.T, usersPath string) string {
	t.Helper()
	srv, err := evloop.NewChat(evloop.ChatConfig{UsersPath: usersPath, Loop: evloop.Options{Logger: slog.New(slog.DiscardHandler)}})
	return serve(t, srv, err)
}
