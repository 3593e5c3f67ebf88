package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"serverlab/tools/given/users"
	"serverlab/tools/given/wire"
)

// everyone is the target the client puts in a BROADCAST, and the one the
// course's server relays it with.
const everyone = wire.Everyone

// register asks the discovery server to record the user. Registering again
// with the same password is accepted, so the client always registers first.
func register(ctx context.Context, o options) error {
	conn, err := dial(ctx, o.discovery, o.timeout)
	if err != nil {
		return fmt.Errorf("cannot reach the discovery server: %w", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(o.timeout))
	reply, err := exchange(conn, wire.Frame{Type: wire.Registration, Sender: o.user, Payload: []byte(o.password)})
	if err != nil {
		return fmt.Errorf("registering with %s: %w", o.discovery, err)
	}
	if string(reply.Payload) != wire.ReplyOK {
		return fmt.Errorf("registration refused: %q is taken by someone with another password, "+
			"or the name or password is invalid (no spaces or invisible characters; names up to %d bytes, not "+
			"%q or %q; passwords up to %d bytes)", o.user, wire.MaxName, wire.ServerName, wire.Everyone, users.MaxPassword)
	}
	return nil
}

// login connects to the chat server and logs in.
func login(ctx context.Context, o options) (*session, error) {
	conn, err := dial(ctx, o.server, o.timeout)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the chat server: %w", err)
	}
	conn.SetDeadline(time.Now().Add(o.timeout))
	reply, err := exchange(conn, wire.Frame{Type: wire.Login, Sender: o.user, Payload: []byte(o.password)})
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("logging in to %s: %w", o.server, err)
	}
	if string(reply.Payload) != wire.ReplyOK {
		conn.Close()
		return nil, fmt.Errorf("login refused: wrong password, or %s is logged in already", o.user)
	}
	conn.SetDeadline(time.Time{})
	return &session{conn: conn, user: o.user, timeout: o.timeout}, nil
}

func dial(ctx context.Context, addr string, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	return d.DialContext(ctx, "tcp", addr)
}

// exchange sends one request and reads one reply.
func exchange(conn net.Conn, req wire.Frame) (wire.Frame, error) {
	if err := wire.WriteFrame(conn, req); err != nil {
		return wire.Frame{}, err
	}
	reply, err := wire.ReadFrame(conn)
	if errors.Is(err, io.EOF) {
		err = errors.New("the server closed the connection without an answer")
	}
	return reply, err
}

// session is a logged-in connection to the chat server.
type session struct {
	conn    net.Conn
	user    string
	timeout time.Duration
}

// chat runs the session: a receiver goroutine prints what arrives, while
// this goroutine turns input lines into frames. It returns nil on /quit or
// at end of input, and an error if the connection is lost.
func (s *session) chat(ctx context.Context, lines <-chan string, out *printer) error {
	lost := make(chan error, 1)
	go func() { lost <- s.receive(out) }()
	defer s.conn.Close()
	for {
		select {
		case line, ok := <-lines:
			if !ok || s.command(line, out) == errQuit {
				s.conn.Close()
				<-lost
				out.println("Bye.")
				return nil
			}
		case err := <-lost:
			out.println("Connection to the chat server lost: " + describe(err))
			return errors.New("connection lost")
		case <-ctx.Done():
			s.conn.Close()
			<-lost
			return nil
		}
	}
}

// receive prints every frame that arrives until the connection ends.
func (s *session) receive(out *printer) error {
	r := bufio.NewReader(s.conn)
	for {
		f, err := wire.ReadFrame(r)
		if err != nil {
			return err
		}
		out.println(format(f))
	}
}

// format turns an incoming frame into what the user reads.
func format(f wire.Frame) string {
	switch f.Type {
	case wire.Broadcast:
		return fmt.Sprintf("[%s -> ALL]: %s", f.Sender, f.Payload)
	case wire.PrivateMsg:
		return fmt.Sprintf("[%s -> YOU]: %s", f.Sender, f.Payload)
	case wire.QueryUser:
		list := strings.TrimSuffix(string(f.Payload), "\n")
		return "Users:\n  " + strings.ReplaceAll(list, "\n", "\n  ")
	default:
		return fmt.Sprintf("[%s]: unexpected %v frame: %q", f.Sender, f.Type, f.Payload)
	}
}

// describe says in words why a connection ended.
func describe(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "the server closed it"
	}
	return err.Error()
}

const help = `Commands:
  /all <message>          send to everyone
  /msg <user> <message>   send to one user
  /users                  list the registered users and who is online
  /help                   this list
  /quit                   leave`

// errQuit is what command returns for /quit.
var errQuit = errors.New("quit")

// command acts on one input line. A message is sent as typed: the command
// and one space after it are taken off, and nothing else, so "/all  indented"
// sends " indented" (the original client keeps the leading space too).
func (s *session) command(line string, out *printer) error {
	line = strings.TrimLeft(strings.TrimSuffix(line, "\r"), " \t")
	if strings.TrimSpace(line) == "" {
		return nil
	}
	cmd, rest, _ := strings.Cut(line, " ")
	switch cmd {
	case "/all":
		if strings.TrimSpace(rest) == "" {
			out.println("usage: /all <message>")
			return nil
		}
		return s.send(out, wire.Frame{Type: wire.Broadcast, Target: everyone, Payload: []byte(rest)})
	case "/msg":
		to, text, _ := strings.Cut(strings.TrimLeft(rest, " "), " ")
		if to == "" || strings.TrimSpace(text) == "" {
			out.println("usage: /msg <user> <message>")
			return nil
		}
		return s.send(out, wire.Frame{Type: wire.PrivateMsg, Target: to, Payload: []byte(text)})
	case "/users":
		return s.send(out, wire.Frame{Type: wire.QueryUser})
	case "/help":
		out.println(help)
	case "/quit":
		return errQuit
	default:
		if strings.HasPrefix(cmd, "/") {
			out.println("unknown command " + cmd + "; type /help for the list")
		} else {
			out.println("not sent: type /all <message> to send to everyone, or /help for the commands")
		}
	}
	return nil
}

// send writes one frame from the user. A frame the codec refuses (a name too
// long, a message over 64 KiB) is reported and the session goes on; a failed
// write means the connection is gone, which the receiver reports.
func (s *session) send(out *printer, f wire.Frame) error {
	f.Sender = s.user
	b, err := wire.Encode(f)
	if err != nil {
		out.println("not sent: " + err.Error())
		return nil
	}
	s.conn.SetWriteDeadline(time.Now().Add(s.timeout))
	if _, err := s.conn.Write(b); err != nil {
		s.conn.Close() // the receiver sees it and reports the loss
	}
	return nil
}

// printer serialises the output of the receiver and the command loop, so
// that lines never mix.
type printer struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *printer) println(s string) { p.print(s + "\n") }

func (p *printer) print(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	io.WriteString(p.w, s)
}

func newScanner(r io.Reader) *bufio.Scanner {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 4096), wire.MaxPayload+1024)
	return s
}

func trimSpace(s string) string { return strings.TrimSpace(strings.TrimSuffix(s, "\r")) }
