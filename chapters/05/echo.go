//go:build linux

package evloop

import (
	"log/slog"
	"strconv"
	"time"
)

// EchoConfig configures the echo server.
type EchoConfig struct {
	// Repeat is how many copies of a line its reply holds (default 1): a
	// short request gets a long reply, as a stock `show` does.
	Repeat int
	// GreetTimeout closes a connection that has not sent a whole line this
	// long after it connected (0: never), like the chat server's login
	// timeout. It is the echo server's only timer.
	GreetTimeout time.Duration
	// Loop tunes the event loop.
	Loop Options
}

// NewEcho returns the echo server on an event loop: every '\n'-terminated
// line a client sends (DrainLines) is answered with "n " and Repeat copies of
// the line, then '\n', where n counts the lines the server answered before
// this one, from every client. The line "bye" is answered the same way, and
// then the connection is closed once the answer is sent. It is given code that needs nothing but the loop:
// the loop's own exercises (5.3–5.8) are checked on it, before the chat and
// stock servers are written.
func NewEcho(cfg EchoConfig) *Loop {
	if cfg.Repeat <= 0 {
		cfg.Repeat = 1
	}
	if cfg.Loop.Logger == nil {
		cfg.Loop.Logger = slog.Default()
	}
	return New(&echo{cfg: cfg, log: cfg.Loop.Logger}, cfg.Loop)
}

// echo is the echo server's Handler.
type echo struct {
	cfg      EchoConfig
	log      *slog.Logger
	answered int64          // lines answered so far, from every client
	awaiting []echoDeadline // connections that have sent no line yet, oldest first
	out      []byte         // scratch buffer: every reply is built here
}

// echoDeadline is when a connection that has sent no line is closed. Every
// connection gets the same timeout: a FIFO queue.
type echoDeadline struct {
	c  *Conn
	at time.Time
}

// greeted marks a connection that has sent a line (its Session).
type greeted struct{}

// Opened starts the connection's greet deadline, if there is one.
func (e *echo) Opened(c *Conn) {
	if e.cfg.GreetTimeout > 0 {
		e.awaiting = append(e.awaiting, echoDeadline{c, time.Now().Add(e.cfg.GreetTimeout)})
	}
}

// Closed logs the end of a connection.
func (e *echo) Closed(c *Conn, err error) {
	e.log.Debug("echo connection closed", "remote", c.Remote(), "err", err)
}

// Tick closes the connections whose greet deadline has passed, and returns
// the next deadline (the zero time: none).
func (e *echo) Tick(now time.Time) time.Time {
	for len(e.awaiting) > 0 {
		d := e.awaiting[0]
		if d.c.Session == nil && !d.c.closed {
			if now.Before(d.at) {
				return d.at
			}
			d.c.Close()
		}
		e.awaiting[0] = echoDeadline{}
		e.awaiting = e.awaiting[1:]
	}
	e.awaiting = nil
	return time.Time{}
}

// Data answers every complete line, in order, until c is congested.
func (e *echo) Data(c *Conn, in []byte) (int, error) {
	var err error
	used, derr := DrainLines(in, func(line []byte) bool {
		c.Session = greeted{}
		e.out = strconv.AppendInt(e.out[:0], e.answered, 10)
		e.out = append(e.out, ' ')
		for range e.cfg.Repeat {
			e.out = append(e.out, line...)
		}
		e.out = append(e.out, '\n')
		e.answered++
		err = c.Write(e.out)
		if err == nil && string(line) == "bye" {
			// The answer is the last thing the client gets: a handler may
			// still write to a connection that is closing (a late event for
			// it), and Write must refuse, or the client gets "late".
			c.CloseWhenFlushed()
			c.Write([]byte("late\n"))
			return false
		}
		return err == nil && !c.Congested()
	})
	if derr != nil {
		return used, derr
	}
	return used, err
}
