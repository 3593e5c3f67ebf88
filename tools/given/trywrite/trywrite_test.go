package trywrite

import (
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// TestWrite: on a TCP connection the bytes arrive; on a connection with no
// socket (net.Pipe) nothing is taken and nothing blocks.
func TestWrite(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 5)
		_, err = io.ReadFull(c, b)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(b)
	}()
	c, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := 5
	if runtime.GOOS == "windows" {
		want = 0
	}
	if n := New(c).Write([]byte("hello")); n != want {
		t.Fatalf("Write on a TCP connection took %d bytes, want %d", n, want)
	}
	if want > 0 {
		if s := <-got; s != "hello" {
			t.Fatalf("the peer read %q, want hello", s)
		}
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if n := New(a).Write([]byte("x")); n != 0 {
		t.Fatalf("Write on a pipe (no socket) took %d bytes, want 0", n)
	}
}
