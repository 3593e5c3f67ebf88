package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// get fetches / from addr with Connection: close and checks the reply is
// the 1 KiB page.
func get(t *testing.T, addr string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + addr + "/f1k.html")
	if err != nil {
		t.Fatalf("GET http://%s/f1k.html: %v", addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	if resp.StatusCode != 200 || len(body) != bodySize || resp.Header.Get("Server") != "OSTEP WebServer" {
		t.Fatalf("GET: want 200, %d bytes, Server: OSTEP WebServer; got %d, %d bytes, Server: %q",
			bodySize, resp.StatusCode, len(body), resp.Header.Get("Server"))
	}
}

func TestNetModeServesThePage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serveNet(ln, response(bodySize)) }()
	for range 3 {
		get(t, ln.Addr().String())
	}
	ln.Close()
	if err := <-done; err == nil {
		t.Fatal("serveNet returned nil after its listener closed; want the Accept error")
	}
}

func TestUnknownModeIsAnError(t *testing.T) {
	if err := run(context.Background(), "fast", "127.0.0.1:0", 1, bodySize, ""); err == nil {
		t.Fatal(`run(mode "fast"): want an error naming the mode, got nil`)
	}
}

func TestFileNeedsNetMode(t *testing.T) {
	if err := run(context.Background(), "raw", "127.0.0.1:0", 1, bodySize, "f.html"); err == nil {
		t.Fatal(`run(mode "raw", -file f.html): want an error (-file is net mode's), got nil`)
	}
}
