// Package procstest makes a test binary double as the fake server its tests
// start (os.Args[0] with FAKE_SERVER=<mode> in the environment), so that
// tests of process handling need no program of their own:
//
//	func TestMain(m *testing.M) { procstest.Main(m) }
package procstest

import (
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Env is the environment variable that picks the fake's mode.
const Env = "FAKE_SERVER"

// Main is a TestMain that runs the tests, unless the binary was started as
// a fake server (MaybeServe).
func Main(m *testing.M) {
	MaybeServe()
	os.Exit(m.Run())
}

// MaybeServe returns at once if FAKE_SERVER is not set. Otherwise the
// process becomes the fake it names, and exits:
//
//	<addr>        an echo server on addr until SIGTERM, then exit 0
//	exit          writes "fake server: refusing to start" on stderr and exits
//	              with status 3, as a broken server would
//	idle          listens nowhere, waits for SIGTERM, then exit 0
//	stubborn      ignores SIGTERM and sleeps (a CGI program, a worker)
//	forker=<addr> ignores SIGTERM, starts a stubborn child, writes the
//	              child's pid and a newline on stdout, then serves the echo
//
// Every fake that waits gives up after a minute, so that a failed test
// leaves nothing running for long.
func MaybeServe() {
	mode := os.Getenv(Env)
	switch {
	case mode == "":
		return
	case mode == "exit":
		io.WriteString(os.Stderr, "fake server: refusing to start\n")
		os.Exit(3)
	case mode == "idle":
		select {
		case <-terminated():
		case <-time.After(time.Minute):
		}
	case mode == "stubborn":
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Minute)
	case strings.HasPrefix(mode, "forker="):
		signal.Ignore(syscall.SIGTERM)
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), Env+"=stubborn")
		if err := child.Start(); err != nil {
			os.Exit(5)
		}
		os.Stdout.WriteString(strconv.Itoa(child.Process.Pid) + "\n")
		echo(strings.TrimPrefix(mode, "forker="), nil)
	default:
		echo(mode, terminated())
	}
	os.Exit(0)
}

// terminated delivers SIGTERM.
func terminated() <-chan os.Signal {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM)
	return c
}

// echo serves an echo on addr until stop delivers (nil: for a minute).
func echo(addr string, stop <-chan os.Signal) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		os.Exit(4)
	}
	go func() {
		if stop == nil {
			time.Sleep(time.Minute)
		} else {
			<-stop
		}
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			io.Copy(c, c)
		}()
	}
}
