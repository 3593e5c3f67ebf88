package guard

import (
	"io"
	"net"
	"testing"
	"time"
)

// lingerPair is a loopback TCP connection: the server's end and the
// client's.
func lingerPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(5 * time.Second))
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// TestLingerLastWordsThenEOF: the client has sent 128 KiB the server never
// read; the server writes its last words, lingers and closes. The client
// must read them and then the end of the stream: closed at once, the
// socket sends a reset instead.
func TestLingerLastWordsThenEOF(t *testing.T) {
	server, client := lingerPair(t)
	client.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := client.Write(make([]byte, 128<<10)); err != nil {
		t.Fatal(err)
	}
	server.Write([]byte("bye"))
	done := make(chan struct{})
	close(done) // nobody else reads the server's end
	Linger(server, done)
	server.Close()
	got, err := io.ReadAll(client)
	if string(got) != "bye" || err != nil {
		t.Fatalf("after 128 KiB unread, then \"bye\", Linger and Close: want \"bye\" and the end of stream, got %q, %v",
			got, err)
	}
}

// TestLingerIsBounded: a client that goes on sending holds Linger for at
// most LingerTimeout, and makes it read at most LingerBytes.
func TestLingerIsBounded(t *testing.T) {
	server, client := lingerPair(t)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		b := make([]byte, 32<<10)
		for {
			select {
			case <-stop:
				return
			default:
			}
			client.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if _, err := client.Write(b); err != nil {
				return
			}
		}
	}()
	counted := &countingConn{TCPConn: server.(*net.TCPConn)}
	began := time.Now()
	Linger(counted, nil)
	if took := time.Since(began); took > LingerTimeout+2*time.Second {
		t.Fatalf("a client that never stops sending held Linger %v; LingerTimeout is %v", took, LingerTimeout)
	}
	if counted.n > LingerBytes {
		t.Fatalf("Linger read %d bytes of a flooding client; LingerBytes is %d", counted.n, LingerBytes)
	}
}

// countingConn counts the bytes read through it, and can half-close.
type countingConn struct {
	*net.TCPConn
	n int
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.TCPConn.Read(b)
	c.n += n
	return n, err
}
