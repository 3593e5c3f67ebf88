// Command discovery runs the chapter 01 discovery (registration) server.
//
//	go run ./chapters/01/cmd/discovery -addr :5000 -users users.txt
//
// Register a user with the course's chat client (tools/cmd/chat) or by hand, and
// stop the server with Ctrl-C.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"

	discovery "serverlab/chapters/01"
	"serverlab/tools/given/lab"
)

func main() {
	addr := flag.String("addr", ":5000", "address to listen on")
	usersPath := flag.String("users", "users.txt", "the users file")
	timeout := flag.Duration("timeout", discovery.DefaultTimeout, "time limit for each phase of one client's exchange: its request, then the answer (at most "+discovery.MaxTimeout.String()+")")
	flag.Parse()

	if err := run(*addr, discovery.Config{UsersPath: *usersPath, Timeout: *timeout}); err != nil {
		fmt.Fprintln(os.Stderr, "discovery:", err)
		os.Exit(1)
	}
}

// run serves until SIGINT or SIGTERM, then closes the server gracefully.
func run(addr string, cfg discovery.Config) error {
	srv, err := discovery.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		srv.Close()
		return err
	}
	return lab.ServeUntilSignal(srv, ln)
}
