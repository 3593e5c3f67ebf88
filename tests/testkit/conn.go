package testkit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"
)

// Conn is a client connection opened by a check. Every wait on it has a
// deadline of IOTimeout, and it remembers what it sent, so that a failure can
// say "sent … / want … / got …".
type Conn struct {
	k    *T
	srv  *Server // may be nil when dialled by address
	conn net.Conn
	r    *bufio.Reader
	sent []string // descriptions of the last few things sent
}

// Dial connects to s with a deadline. The connection is closed at cleanup.
func (k *T) Dial(s *Server) *Conn {
	k.Helper()
	c, err := k.dial(s.Addr)
	if err != nil {
		k.Fatalf("dial %s: %v%s", s.Addr, err, s.whyDown())
	}
	c.srv = s
	return c
}

// DialAddr connects to addr with a deadline. The connection is closed at
// cleanup.
func (k *T) DialAddr(addr string) *Conn {
	k.Helper()
	c, err := k.dial(addr)
	if err != nil {
		k.Fatalf("dial %s: %v", addr, err)
	}
	return c
}

// TryDial is Dial for use from other goroutines: it reports errors instead of
// failing the check.
func (k *T) TryDial(s *Server) (*Conn, error) {
	c, err := k.dial(s.Addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w%s", s.Addr, err, s.whyDown())
	}
	c.srv = s
	return c, nil
}

func (k *T) dial(addr string) (*Conn, error) {
	nc, err := net.DialTimeout("tcp", addr, IOTimeout)
	if err != nil {
		return nil, err
	}
	c := &Conn{k: k, conn: nc, r: bufio.NewReader(nc)}
	k.OnAbort(func() { nc.Close() })
	k.Cleanup(func() { nc.Close() })
	return c, nil
}

// NetConn is the underlying connection, for checks that need raw access.
func (c *Conn) NetConn() net.Conn { return c.conn }

// Close closes the connection.
func (c *Conn) Close() { c.conn.Close() }

// CloseWrite half-closes the connection: the server reads end-of-file.
func (c *Conn) CloseWrite() {
	if tc, ok := c.conn.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
}

// History describes what was sent on c, most recent last, for failure messages.
func (c *Conn) History() string {
	if len(c.sent) == 0 {
		return "(nothing)"
	}
	return strings.Join(c.sent, "\n      ")
}

func (c *Conn) remember(what string) {
	const keep = 8
	c.sent = append(c.sent, what)
	if len(c.sent) > keep {
		c.sent = c.sent[len(c.sent)-keep:]
	}
}

// Context formats the standard failure context: what was sent and, if the
// server has stopped, why.
func (c *Conn) Context() string {
	return "\n  sent: " + c.History() + c.srv.whyDown()
}

// TryWrite writes b with a deadline; describe says what b is, for messages.
func (c *Conn) TryWrite(b []byte, describe string) error {
	c.remember(describe)
	c.conn.SetWriteDeadline(time.Now().Add(IOTimeout))
	_, err := c.conn.Write(b)
	return err
}

// Write writes b or fails the check.
func (c *Conn) Write(b []byte, describe string) {
	c.k.Helper()
	if err := c.TryWrite(b, describe); err != nil {
		c.k.Fatalf("writing %s: %v%s", describe, err, c.Context())
	}
}

// WriteLine writes line plus "\n" or fails the check.
func (c *Conn) WriteLine(line string) {
	c.k.Helper()
	c.Write([]byte(line+"\n"), fmt.Sprintf("%q", line+"\n"))
}

// Reader gives a deadline-bounded view of the connection for codecs: each call
// to Read sets a fresh read deadline of IOTimeout.
func (c *Conn) Reader() io.Reader { return deadlineReader{c} }

type deadlineReader struct{ c *Conn }

func (d deadlineReader) Read(p []byte) (int, error) {
	d.c.conn.SetReadDeadline(time.Now().Add(IOTimeout))
	return d.c.r.Read(p)
}

// TryReadLine reads one '\n'-terminated line (returned without the '\n').
func (c *Conn) TryReadLine() (string, error) {
	c.conn.SetReadDeadline(time.Now().Add(IOTimeout))
	line, err := c.r.ReadString('\n')
	if err != nil {
		return line, err
	}
	return strings.TrimSuffix(line, "\n"), nil
}

// ReadLine reads one line or fails the check.
func (c *Conn) ReadLine() string {
	c.k.Helper()
	line, err := c.TryReadLine()
	if err != nil {
		c.k.Fatalf("reading a line: %s (partial: %q)%s", Describe(err), line, c.Context())
	}
	return line
}

// ExpectLine reads one line and compares it with want.
func (c *Conn) ExpectLine(want string) {
	c.k.Helper()
	got, err := c.TryReadLine()
	if err != nil {
		c.k.Fatalf("want line %q, got %s (partial: %q)%s", want, Describe(err), got, c.Context())
	}
	if got != want {
		c.k.Fatalf("wrong reply\n  want: %q\n   got: %q%s", want, got, c.Context())
	}
}

// TryReadFull reads exactly len(p) bytes.
func (c *Conn) TryReadFull(p []byte) error {
	_, err := io.ReadFull(c.Reader(), p)
	return err
}

// ExpectClosed checks that the server closes the connection without sending
// anything more.
func (c *Conn) ExpectClosed() {
	c.k.Helper()
	c.conn.SetReadDeadline(time.Now().Add(IOTimeout))
	var buf [512]byte
	n, err := c.r.Read(buf[:])
	switch {
	case n > 0:
		c.k.Fatalf("want the server to close the connection without a reply, got %d bytes: %q%s",
			n, buf[:n], c.Context())
	case IsClosed(err):
	case isTimeout(err):
		c.k.Fatalf("want the server to close the connection, but it stayed open for %v%s", IOTimeout, c.Context())
	default:
		c.k.Fatalf("want the server to close the connection, got %v%s", err, c.Context())
	}
}

// IsClosed reports whether err means the peer closed the connection (an
// orderly end-of-file or a reset).
func IsClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Describe turns a read error into words a student understands.
func Describe(err error) string {
	switch {
	case err == nil:
		return "no error"
	case isTimeout(err):
		return fmt.Sprintf("nothing within %v (the server did not answer)", IOTimeout)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "end of stream (the server closed the connection)"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset (the server closed the connection)"
	default:
		return err.Error()
	}
}

// Quote shows bytes for a failure message: as a string when printable,
// otherwise as hex.
func Quote(b []byte) string {
	for _, c := range b {
		if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c >= 0x7f {
			return fmt.Sprintf("% x", b)
		}
	}
	return fmt.Sprintf("%q", b)
}
