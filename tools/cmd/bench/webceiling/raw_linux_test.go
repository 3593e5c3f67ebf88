package main

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestRawModeServesThePage(t *testing.T) {
	fd, err := listenBlocking("127.0.0.1:0") // port 0: the kernel picks a free one
	if err != nil {
		t.Fatal(err)
	}
	port, err := boundPort(fd)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveFD(ctx, fd, 2, response(bodySize)) }()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for range 3 {
		get(t, addr)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serveFD after cancel: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serveFD did not return 5 s after its context was cancelled")
	}
}
