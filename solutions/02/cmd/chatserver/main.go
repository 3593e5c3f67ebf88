// Command chatserver runs the chapter 02 chat server.
//
//	go run ./solutions/02/cmd/chatserver -addr :6000 -users users.txt
//
// Users register with the discovery server of chapter 01, which writes the
// same users file; talk to the server with the course's client, tools/cmd/chat.
// Stop it with Ctrl-C.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"

	chat "serverlab/solutions/02"
	"serverlab/tools/given/lab"
)

func main() {
	addr := flag.String("addr", ":6000", "address to listen on")
	usersPath := flag.String("users", "users.txt", "the users file the discovery server writes")
	maxPending := flag.Int("max-pending", chat.DefaultMaxPending, "bytes queued for one client before it is disconnected as too slow")
	stallTimeout := flag.Duration("stall-timeout", chat.DefaultStallTimeout, "time a frame waits for room in a full queue before its client is disconnected as not reading")
	loginTimeout := flag.Duration("login-timeout", chat.DefaultLoginTimeout, "time a new connection has to log in")
	flag.Parse()

	cfg := chat.Config{UsersPath: *usersPath, MaxPending: *maxPending, StallTimeout: *stallTimeout, LoginTimeout: *loginTimeout}
	if err := run(*addr, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "chatserver:", err)
		os.Exit(1)
	}
}

// run serves until SIGINT or SIGTERM, then closes the server gracefully.
func run(addr string, cfg chat.Config) error {
	srv, err := chat.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return lab.ServeUntilSignal(srv, ln)
}
