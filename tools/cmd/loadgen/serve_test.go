//go:build solutions

package main

import (
	"errors"
	"net"
	"testing"

	"serverlab/tools/given/lab"
)

// serve runs a reference server (built by the caller, with newErr its
// constructor's error) on 127.0.0.1:0 until the test ends, and returns its
// address. At cleanup it closes the server and checks that Serve returned
// lab.ErrServerClosed.
func serve(t *testing.T, srv lab.Server, newErr error) string {
	t.Helper()
	if newErr != nil {
		t.Fatal(newErr)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, lab.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}
