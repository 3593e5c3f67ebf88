//go:build linux

package judge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"serverlab/tools/given/lab"
)

// Counter is an object the subject hands out.
type Counter interface {
	Add(n int) (int, error)
}

type counterProxy struct{ o *Object }

func (c *counterProxy) Add(n int) (total int, err error) {
	_ = c.o.Call("Add", []any{n}, &total, &err)
	return total, err
}

type counter struct{ n int }

var errTooMuch = errors.New("too much")

func (c *counter) Add(n int) (int, error) {
	if n > 100 {
		return c.n, fmt.Errorf("add %d: %w", n, errTooMuch)
	}
	c.n += n
	return c.n, nil
}

// testImpl is what the test subject serves.
type testImpl struct {
	Flag       bool
	ErrTooMuch error
	Echo       func(b []byte, s string, m map[string]int) ([]byte, string, map[string]int)
	ReadAll    func(r io.Reader) (string, error)
	ReadLine   func(br *bufio.Reader) (string, error)
	Twice      func(n int, f func(int) int) int
	NewCounter func() Counter
	Total      func(c Counter) int
	Greet      func(ln net.Listener) error
	Wait       func(ctx context.Context) error
	Unwrap     func(err error) error
	Errno      func() error
	NotImpl    func() error
	// The checks TestProxiesAreFaithful runs on real objects here and on
	// proxies in the subject.
	CheckListener func(ln net.Listener) string
	CheckConn     func(c net.Conn) string
}

var subjectImpl = testImpl{
	Flag:       true,
	ErrTooMuch: errTooMuch,
	Echo: func(b []byte, s string, m map[string]int) ([]byte, string, map[string]int) {
		return append(b, '!'), s + "?", m
	},
	ReadAll: func(r io.Reader) (string, error) {
		b, err := io.ReadAll(r)
		return string(b), err
	},
	ReadLine:   func(br *bufio.Reader) (string, error) { return br.ReadString('\n') },
	Twice:      func(n int, f func(int) int) int { return f(f(n)) },
	NewCounter: func() Counter { return &counter{} },
	Total:      func(c Counter) int { return c.(*counter).n },
	Greet: func(ln net.Listener) error {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = io.WriteString(c, "hi from "+fmt.Sprint(os.Getpid()))
		return err
	},
	Wait: func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	},
	Unwrap:        func(err error) error { return fmt.Errorf("wrapped: %w", err) },
	Errno:         func() error { return &os.SyscallError{Syscall: "accept", Err: syscall.EMFILE} },
	NotImpl:       func() error { return lab.NotImplemented("9.9", "Thing") },
	CheckListener: checkListener,
	CheckConn:     checkConn,
}

func init() {
	Proxy(func(o *Object) Counter { return &counterProxy{o} })
}

func TestMain(m *testing.M) {
	if IsSubject() {
		os.Exit(Serve(subjectImpl))
	}
	os.Exit(m.Run())
}

// startSubject runs this test binary as the subject and connects the
// judge's end to it.
func startSubject(t *testing.T) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	mine, theirs := os.NewFile(uintptr(fds[0]), "judge"), os.NewFile(uintptr(fds[1]), "subject")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	id, err := SocketID(theirs)
	require.NoError(t, err)
	cmd.Env = append(os.Environ(), RoleEnv+"="+Subject, SocketIDEnv+"="+id)
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	theirs.Close()
	c, err := net.FileConn(mine)
	mine.Close()
	require.NoError(t, err)
	p := newPeer(newLink(c.(*net.UnixConn)), "j")
	go p.loop()
	judgeSide = func() (*peer, error) { return p, nil }
	t.Cleanup(func() {
		start := time.Now()
		assert.Empty(t, Finish())
		t.Logf("finish took %v", time.Since(start))
		p.link.close()
		assert.NoError(t, cmd.Wait())
	})
}

func TestAcrossProcesses(t *testing.T) {
	startSubject(t)
	impl := Remote(testImpl{Flag: true})
	require.NotNil(t, impl.Echo, "Remote got no functions")
	assert.True(t, impl.Flag)

	b, s, m := impl.Echo([]byte("ab"), "x", map[string]int{"k": 2})
	assert.Equal(t, "ab!", string(b))
	assert.Equal(t, "x?", s)
	assert.Equal(t, map[string]int{"k": 2}, m)

	got, err := impl.ReadAll(strings.NewReader(strings.Repeat("z", 3<<20)))
	require.NoError(t, err)
	assert.Len(t, got, 3<<20, "a reader read across processes")

	br := bufio.NewReader(strings.NewReader("one\ntwo\n"))
	l1, _ := impl.ReadLine(br)
	l2, _ := impl.ReadLine(br)
	assert.Equal(t, []string{"one\n", "two\n"}, []string{l1, l2}, "one bufio.Reader on the other side per reader")

	calls := 0
	assert.Equal(t, 12, impl.Twice(3, func(n int) int { calls++; return n * 2 }))
	assert.Equal(t, 2, calls, "the callback ran here")

	c := impl.NewCounter()
	total, err := c.Add(5)
	assert.Equal(t, 5, total)
	assert.NoError(t, err)
	_, err = c.Add(1000)
	assert.ErrorIs(t, err, impl.ErrTooMuch, "errors.Is across processes, against an error the subject sent")
	assert.Equal(t, 5, impl.Total(c), "a proxy goes home as the object itself")

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	done := make(chan error, 1)
	go func() { done <- impl.Greet(ln) }()
	conn, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
	require.NoError(t, err)
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	hello, _ := io.ReadAll(conn)
	conn.Close()
	require.NoError(t, <-done)
	assert.True(t, strings.HasPrefix(string(hello), "hi from "), "got %q", hello)
	assert.NotEqual(t, fmt.Sprint("hi from ", os.Getpid()), string(hello), "the greeting came from the subject")

	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() { waited <- impl.Wait(ctx) }()
	cancel()
	select {
	case err := <-waited:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled context did not reach the subject")
	}

	mine := errors.New("mine")
	assert.ErrorIs(t, impl.Unwrap(mine), mine, "an error of the judge's, wrapped by the subject")
	assert.ErrorIs(t, impl.Errno(), syscall.EMFILE)
	assert.ErrorIs(t, impl.NotImpl(), lab.ErrNotImplemented)
	assert.Contains(t, impl.NotImpl().Error(), "ex 9.9: Thing")
}

// checkListener is what a correct accept loop may rely on: a deadline that
// ends Accept with a timeout (os.ErrDeadlineExceeded, net.Error.Timeout),
// and, once closed, net.ErrClosed. It says what differs, or "".
func checkListener(ln net.Listener) string {
	dl, ok := ln.(interface{ SetDeadline(time.Time) error })
	if !ok {
		return fmt.Sprintf("a %T has no SetDeadline", ln)
	}
	if err := dl.SetDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		return "SetDeadline: " + err.Error()
	}
	_, err := ln.Accept()
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		return fmt.Sprintf("Accept past the listener's deadline returned %v; want a timeout (os.ErrDeadlineExceeded)", err)
	}
	if err := dl.SetDeadline(time.Time{}); err != nil {
		return "SetDeadline(zero): " + err.Error()
	}
	if err := ln.Close(); err != nil {
		return "Close: " + err.Error()
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		return fmt.Sprintf("Accept on a closed listener returned %v; want net.ErrClosed", err)
	}
	return ""
}

// checkConn is what a correct server may rely on of a connection that is
// not a bare socket: a read deadline that ends Read with a timeout, and a
// half-close (CloseWrite) when the connection has one.
func checkConn(c net.Conn) string {
	if err := c.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		return "SetReadDeadline: " + err.Error()
	}
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		return fmt.Sprintf("Read past the deadline returned %v; want a timeout (os.ErrDeadlineExceeded)", err)
	}
	hc, ok := c.(interface{ CloseWrite() error })
	if !ok {
		return fmt.Sprintf("a %T has no CloseWrite", c)
	}
	if err := hc.CloseWrite(); err != nil {
		return "CloseWrite: " + err.Error()
	}
	return ""
}

// wrappedConn is a connection that is not a bare socket (a check's
// wrapper): it crosses as a proxy, not as a descriptor.
type wrappedConn struct{ *net.TCPConn }

// TestProxiesAreFaithful runs the same checks on real objects and, in the
// subject, on their proxies: what a correct solution can tell of a listener
// or a connection must not differ under the grader.
func TestProxiesAreFaithful(t *testing.T) {
	startSubject(t)
	impl := Remote(testImpl{Flag: true})
	for _, side := range []struct {
		name           string
		listener       func(net.Listener) string
		conn           func(net.Conn) string
		wantProxyTypes bool
	}{
		{"real", checkListener, checkConn, false},
		{"proxy", impl.CheckListener, impl.CheckConn, true},
	} {
		t.Run(side.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			if msg := side.listener(ln); msg != "" {
				t.Error(msg)
			}

			peer, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer peer.Close()
			dialed, err := net.DialTimeout("tcp", peer.Addr().String(), 5*time.Second)
			require.NoError(t, err)
			defer dialed.Close()
			accepted, err := peer.Accept()
			require.NoError(t, err)
			defer accepted.Close()
			if msg := side.conn(&wrappedConn{dialed.(*net.TCPConn)}); msg != "" {
				t.Error(msg)
			}
			accepted.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, err := accepted.Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Errorf("after CloseWrite the peer read %d bytes, %v; want io.EOF", n, err)
			}
		})
	}
}

// TestImplDataIsTheCourses: Remote keeps the subject's functions but takes
// every plain-data field from the course's wiring, and names the first one
// the subject reported otherwise (a subject claiming Threaded: false).
func TestImplDataIsTheCourses(t *testing.T) {
	type impl struct {
		Threaded bool
		Sizes    []int
		Err      error
		Run      func() int
	}
	run := func() int { return 7 }
	fromSubject := impl{Threaded: false, Sizes: []int{1}, Err: errTooMuch, Run: run}
	course := impl{Threaded: true, Sizes: []int{1}}
	got := fromSubject
	differs := takeData(reflect.ValueOf(&got).Elem(), reflect.ValueOf(course))
	assert.Equal(t, "Threaded", differs, "the field the subject lied about")
	assert.True(t, got.Threaded, "data comes from the course")
	assert.Equal(t, errTooMuch, got.Err, "an error is the subject's (its identity crosses)")
	assert.Equal(t, 7, got.Run(), "functions are the subject's")
	same := course
	assert.Empty(t, takeData(reflect.ValueOf(&same).Elem(), reflect.ValueOf(course)))
}
