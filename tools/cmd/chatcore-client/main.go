// Command chatcore-client is the course's client for chapter 07's chatcore
// server (and the original's, github.com/ebroschin/chatcore), with the
// original client's commands:
//
//	go run ./tools/cmd/chatcore-client
//	/connect 127.0.0.1 1338
//	/adduser alice secret
//	/login alice secret
//	/addchannel general
//	/channels
//	/join 1
//	hello, everyone            (a line without / is a chat message)
//	/logout
//	/shutdown                  (stops the server: administrators only)
//	/exit
//
// On a terminal it is a full-screen UI (bubbletea): what happens above, the
// prompt — "chat> ", or "chat::<channel>> " once joined — below. With -line,
// or when standard input is not a terminal, it reads commands line by line
// and prints what happens, one line each. Either way chat messages show as
// "[You] …" or "[User::<name>] …", events as "* …", and joining a channel
// shows its latest 20 messages. -connect host:port connects at start.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
)

func main() {
	connect := flag.String("connect", "", "connect to `host:port` at start (otherwise use /connect)")
	lineMode := flag.Bool("line", false, "plain line mode, also on a terminal")
	flag.Parse()
	var err error
	if *lineMode || !isTerminal(os.Stdin) {
		err = run(os.Stdin, os.Stdout, *connect)
	} else {
		err = runTUI(*connect)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chatcore-client:", err)
		os.Exit(1)
	}
}

// run is the line mode: a command per input line, a line per event.
func run(in io.Reader, out io.Writer, connect string) error {
	var mu sync.Mutex // the reader goroutine prints too
	s := newSession(func(line string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(out, line)
	})
	defer s.close()
	if connect != "" {
		host, port, err := net.SplitHostPort(connect)
		if err != nil {
			return err
		}
		s.command("/connect " + host + " " + port)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if s.command(sc.Text()) {
			return nil
		}
	}
	return sc.Err()
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
