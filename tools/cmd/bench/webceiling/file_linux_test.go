package main

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFileModeSendsTheFile checks -file at both of chapter 06's sizes: a small
// file goes out with its header in one write, a large one by sendfile after a
// MSG_MORE header; the client must get the file byte for byte either way.
func TestFileModeSendsTheFile(t *testing.T) {
	for _, size := range []int{1024, 100 << 10} {
		content := make([]byte, size)
		rand.Read(content)
		path := filepath.Join(t.TempDir(), "f.html")
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go serveNetFile(ln, path)
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := client.Get("http://" + ln.Addr().String() + "/anything")
		if err != nil {
			t.Fatalf("-file, %d bytes: GET: %v", size, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		ln.Close()
		if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, content) {
			t.Fatalf("-file, %d bytes: want 200 and the file; got %d, %d bytes (%v)", size, resp.StatusCode, len(body), err)
		}
	}
}

func TestSizeSetsTheReplyLength(t *testing.T) {
	resp := response(100 << 10)
	head, body, ok := bytes.Cut(resp, []byte("\r\n\r\n"))
	if !ok || len(body) != 100<<10 || !bytes.Contains(head, []byte("Content-Length: 102400")) {
		t.Fatalf("response(102400): header %q and %d body bytes; want Content-Length: 102400 and 102400 bytes", head, len(body))
	}
}
