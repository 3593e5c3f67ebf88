//go:build linux

// Command chatserver runs the chapter 05 chat server: the chat protocol v1
// server on an epoll event loop, one goroutine for every client.
//
//	go run ./chapters/05/cmd/chatserver -addr :6000 -users users.txt
//
// It takes the same arguments as chapter 02's chatserver, so every tool and
// experiment can run either. Users register with the discovery server of
// chapter 01; talk to the server with the course's client, tools/cmd/chat. Stop it
// with Ctrl-C.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	evloop "serverlab/solutions/05"
	"serverlab/tools/given/lab"
)

func main() {
	addr := flag.String("addr", ":6000", "address to listen on")
	usersPath := flag.String("users", "users.txt", "the users file the discovery server writes")
	maxPending := flag.Int("max-pending", 1<<20, "bytes queued for one client before it is disconnected as too slow")
	loginTimeout := flag.Duration("login-timeout", 10*time.Second, "time a new connection has to log in")
	flag.Parse()

	cfg := evloop.ChatConfig{UsersPath: *usersPath, LoginTimeout: *loginTimeout, Loop: evloop.Options{MaxPending: *maxPending}}
	if err := run(*addr, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "chatserver:", err)
		os.Exit(1)
	}
}

// run serves until SIGINT or SIGTERM, then closes the server gracefully.
func run(addr string, cfg evloop.ChatConfig) error {
	srv, err := evloop.NewChat(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	slog.Info("chat server running", "addr", ln.Addr())
	return lab.ServeUntilSignal(srv, ln)
}
