package lab

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// drainingServer serves until Close; its Close takes as long as release
// keeps it waiting: a graceful shutdown that drains slowly.
type drainingServer struct {
	closing  chan struct{}
	once     sync.Once
	release  chan struct{}
	onServe  func() // called when Serve starts
	onClosed func() // called when Close starts
}

func newDrainingServer() *drainingServer {
	return &drainingServer{closing: make(chan struct{}), release: make(chan struct{})}
}

func (s *drainingServer) Serve(ln net.Listener) error {
	if s.onServe != nil {
		s.onServe()
	}
	<-s.closing
	return ErrServerClosed
}

func (s *drainingServer) Close() error {
	s.once.Do(func() {
		close(s.closing)
		if s.onClosed != nil {
			s.onClosed()
		}
	})
	<-s.release
	return nil
}

// TestServeUntilForcedExit: the first signal starts Close; a second one, while
// Close still drains, forces the exit at once.
func TestServeUntilForcedExit(t *testing.T) {
	srv := newDrainingServer()
	sigs := make(chan os.Signal, 2)
	started := make(chan struct{})
	srv.onClosed = func() { close(started) }
	forced := make(chan os.Signal, 1)
	result := make(chan error, 1)
	go func() {
		result <- serveUntil(srv, nil, sigs, func(sig os.Signal) {
			forced <- sig
			close(srv.release) // what os.Exit would end: let the test finish
		})
	}()
	sigs <- syscall.SIGTERM
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("a SIGTERM did not start Close within 5s")
	}
	sigs <- os.Interrupt
	select {
	case sig := <-forced:
		assert.Equal(t, os.Interrupt, sig, "forced exit: want the second signal")
	case <-time.After(5 * time.Second):
		t.Fatal("a second signal while Close was draining did not force the exit within 5s")
	}
	assert.NoError(t, <-result, "serveUntil after Close returned nil")
}

// TestServeUntilCleanShutdown: one signal, a Close that finishes: nil, and
// no forced exit.
func TestServeUntilCleanShutdown(t *testing.T) {
	srv := newDrainingServer()
	close(srv.release)
	sigs := make(chan os.Signal, 2)
	sigs <- syscall.SIGTERM
	err := serveUntil(srv, nil, sigs, func(sig os.Signal) { t.Errorf("forced exit for %v after one signal", sig) })
	assert.NoError(t, err, "serveUntil")
}

// TestServeUntilServeFails: Serve failing by itself still closes the server,
// and its error is returned.
func TestServeUntilServeFails(t *testing.T) {
	boom := errors.New("boom")
	srv := &failingServer{err: boom}
	err := serveUntil(srv, nil, make(chan os.Signal), func(os.Signal) {})
	assert.ErrorIs(t, err, boom, "serveUntil")
	assert.True(t, srv.closed, "serveUntil: Close must be called")
}

type failingServer struct {
	err    error
	closed bool
}

func (s *failingServer) Serve(net.Listener) error { return s.err }
func (s *failingServer) Close() error             { s.closed = true; return nil }

// childEnv makes the test binary run ServeUntilSignal as a program would.
const childEnv = "LAB_SERVE_UNTIL_SIGNAL_CHILD"

// TestServeUntilSignalProcess sends real signals to a real process: SIGTERM
// starts a shutdown that never ends; SIGINT then exits the process at once,
// with status 1 and a message.
func TestServeUntilSignalProcess(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		srv := newDrainingServer() // Close never returns
		srv.onServe = func() { fmt.Println("serving") }
		srv.onClosed = func() { fmt.Println("closing") }
		ServeUntilSignal(srv, nil)
		os.Exit(0) // not reached: Close never returns
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeUntilSignalProcess$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	expect := func(want string) {
		t.Helper()
		got := make(chan bool, 1)
		go func() { got <- lines.Scan() && lines.Text() == want }()
		select {
		case ok := <-got:
			if !ok {
				t.Fatalf("the child did not print %q (stderr: %s)", want, stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the child did not print %q within 10s", want)
		}
	}
	expect("serving")
	// Notify runs before Serve prints "serving"; the signal is handled.
	cmd.Process.Signal(syscall.SIGTERM)
	expect("closing")
	cmd.Process.Signal(os.Interrupt)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if assert.ErrorAs(t, err, &ee, "after a second signal, how the process exited") {
			assert.Equal(t, 1, ee.ExitCode(), "after a second signal, the exit status")
		}
		assert.Contains(t, stderr.String(), "again during shutdown", "stderr must say why the process exited")
	case <-time.After(5 * time.Second):
		t.Fatal("a second signal during a shutdown that does not end: the process did not exit within 5s")
	}
}
