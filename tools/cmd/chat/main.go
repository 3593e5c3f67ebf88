// Command chat is the course's interactive chat client (chat protocol v1,
// docs/protocols.md §1), a re-creation of the original's chat_client: it
// registers with the discovery server, logs in to the chat server, prints
// incoming messages from a receiver goroutine, and sends what you type.
//
//	go run ./tools/cmd/chat -user alice -password pass123
//	go run ./tools/cmd/chat -addr 127.0.0.1:6000 -discovery 127.0.0.1:5000
//
// Without -user or -password it asks for them. With -register-only it
// registers, says so, and exits: a way to create an account from a script.
// Commands:
//
//	/all <message>          send to everyone
//	/msg <user> <message>   send to one user
//	/users                  list the registered users and who is online
//	/help                   list the commands
//	/quit                   leave (so does end of input, Ctrl-D)
//
// Incoming messages are printed one per line, as the original did:
//
//	[alice -> ALL]: hello everyone
//	[bob -> YOU]: hi alice
//
// Input and output are plain lines, so the client can be driven by a script
// or a test as well as by a person.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
}

// options are the command-line settings.
type options struct {
	discovery, server string
	user, password    string
	register          bool
	registerOnly      bool
	timeout           time.Duration
}

func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.discovery, "discovery", "127.0.0.1:5000", "discovery server `address`")
	// -addr is the server the tool talks to, as in every other tool of the
	// course (loadgen chat says -addr for the chat server and -discovery for
	// the discovery server too); -server is the old name, kept so that
	// scripts written for it still run.
	fs.StringVar(&o.server, "addr", "127.0.0.1:6000", "chat server `address`")
	fs.StringVar(&o.server, "server", "127.0.0.1:6000", "deprecated: the same as -addr")
	fs.StringVar(&o.user, "user", "", "user name (asked for if empty)")
	fs.StringVar(&o.password, "password", "", "password (asked for if empty; plaintext, as in the original)")
	fs.BoolVar(&o.register, "register", true, "register with the discovery server before logging in")
	fs.BoolVar(&o.registerOnly, "register-only", false, "register with the discovery server, then exit without logging in")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Second, "limit on connecting and on each exchange with a server")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return o, nil
}

// run is the whole client; main only wires it to the process. It returns nil
// when the user quits, and an error when a server refuses or goes away.
func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	o, err := parseFlags(args, stdout)
	if err != nil {
		return err
	}
	out := &printer{w: stdout}
	lines := readLines(stdin)
	if o.user == "" {
		if o.user, err = ask(out, lines, "Username: "); err != nil {
			return err
		}
	}
	if o.password == "" {
		if o.password, err = ask(out, lines, "Password: "); err != nil {
			return err
		}
	}
	if o.register || o.registerOnly {
		if err := register(ctx, o); err != nil {
			return err
		}
		out.println("Registered as " + o.user + " with the discovery server at " + o.discovery + ".")
		if o.registerOnly {
			return nil
		}
	}
	s, err := login(ctx, o)
	if err != nil {
		return err
	}
	out.println("Logged in as " + o.user + ". Type /help for the commands.")
	return s.chat(ctx, lines, out)
}

// readLines delivers stdin's lines on a channel, closed at end of input, so
// the main loop can wait for input and for the connection at once. The
// goroutine ends at end of input; a program that exits while it is blocked
// reading a terminal simply leaves it behind.
func readLines(r io.Reader) <-chan string {
	lines := make(chan string)
	go func() {
		defer close(lines)
		s := newScanner(r)
		for s.Scan() {
			lines <- s.Text()
		}
	}()
	return lines
}

// ask prints a prompt and returns the next non-empty line.
func ask(out *printer, lines <-chan string, prompt string) (string, error) {
	for {
		out.print(prompt)
		line, ok := <-lines
		if !ok {
			return "", errors.New("end of input")
		}
		if line = trimSpace(line); line != "" {
			return line, nil
		}
	}
}
