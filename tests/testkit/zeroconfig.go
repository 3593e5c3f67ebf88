package testkit

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"serverlab/tools/given/lab"
)

// ZeroDefault is one duration field of a chapter's Config whose zero value
// means "the documented default" (the command-line flags pass 0 for "not
// set"). A server that tests `< 0` instead of `<= 0` keeps the zero, and a
// deadline of now + 0 drops every client at its first read or write.
type ZeroDefault struct {
	Field   string        // the Config field, as the lesson names it: "Timeout"
	Default time.Duration // its documented default
	// Setters are the deadline setters the field governs: "SetDeadline",
	// "SetReadDeadline", "SetWriteDeadline".
	Setters []string
}

// ZeroConfig is the check every chapter with defaulted Config fields shares:
// srv was built from a zero Config (every field left 0), and must behave as
// the documented defaults say. It serves srv on a listener that records the
// deadlines the server sets on each connection, runs exchange (one
// ordinary client request and its answer; it returns what went wrong, with
// sent / want / got), and then requires every deadline that a setter of a
// ZeroDefault set to lie at least half the default ahead of when it was set,
// and at least one such deadline. Recording the deadlines makes the check
// exact and instant: nobody waits for a default to run out.
//
// Fields that are not durations (a worker count) are checked by exchange:
// with zero workers kept as zero, nothing ever answers.
func (k *T) ZeroConfig(srv lab.Server, exchange func(s *Server) error, defaults ...ZeroDefault) {
	k.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	rl := RecordDeadlines(ln)
	s := k.ServeListener(srv, rl)
	var names []string
	for _, d := range defaults {
		names = append(names, fmt.Sprintf("%s = %v", d.Field, d.Default))
	}
	documented := strings.Join(names, ", ")
	if len(names) == 0 {
		documented = "see the lesson"
	}
	if err := exchange(s); err != nil {
		k.Fatalf("a server built with a zero Config (every field 0, as the flags pass \"not set\"): %v\n"+
			"likely cause: New keeps a zero field instead of replacing it with its documented default (%s): "+
			"test `<= 0`, not `< 0`", err, documented)
	}
	for _, d := range defaults {
		seen := 0
		for _, set := range rl.Deadlines() {
			if !contains(d.Setters, set.Which) || set.Deadline.IsZero() {
				continue
			}
			ahead := set.Deadline.Sub(set.At)
			if ahead < -time.Hour {
				continue // a deadline long past is a wake-up (aLongTimeAgo), not a timeout
			}
			seen++
			if ahead < d.Default/2 {
				k.Fatalf("a server built with a zero Config (%s left 0) called %s(now + %v) on a client's connection; "+
					"want now + %v, the documented default of %s\n"+
					"likely cause: New keeps %s = 0 (a test `< 0` instead of `<= 0`), so every client is dropped "+
					"at its first %s", d.Field, set.Which, ahead.Round(time.Millisecond), d.Default, d.Field,
					d.Field, strings.TrimSuffix(strings.TrimPrefix(set.Which, "Set"), "Deadline")+" wait")
			}
		}
		if seen == 0 {
			k.Fatalf("a server built with a zero Config (%s left 0) served a client without calling %s on its "+
				"connection: with %s at its default (%v) every %s must have a deadline",
				d.Field, strings.Join(d.Setters, " or "), d.Field, d.Default,
				strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(d.Setters[0], "Set"), "Deadline"))+" wait")
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// DeadlineSet is one call of a deadline setter: which, when, and to what.
type DeadlineSet struct {
	Which        string
	At, Deadline time.Time
}

// DeadlineRecorder is a listener whose connections record the deadlines
// set on them, so that a check can see a server's deadlines without
// waiting for them to pass.
type DeadlineRecorder struct {
	net.Listener
	mu       sync.Mutex
	accepted int
	set      []DeadlineSet
}

// RecordDeadlines wraps ln.
func RecordDeadlines(ln net.Listener) *DeadlineRecorder { return &DeadlineRecorder{Listener: ln} }

func (l *DeadlineRecorder) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.accepted++
	l.mu.Unlock()
	return &recordingConn{Conn: c, l: l}, nil
}

// Accepted is how many connections the listener has handed out.
func (l *DeadlineRecorder) Accepted() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.accepted
}

// Deadlines are the deadlines set so far on every connection, in order.
func (l *DeadlineRecorder) Deadlines() []DeadlineSet {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]DeadlineSet(nil), l.set...)
}

type recordingConn struct {
	net.Conn
	l *DeadlineRecorder
}

func (c *recordingConn) record(which string, t time.Time) {
	c.l.mu.Lock()
	c.l.set = append(c.l.set, DeadlineSet{which, time.Now(), t})
	c.l.mu.Unlock()
}

func (c *recordingConn) SetDeadline(t time.Time) error {
	c.record("SetDeadline", t)
	return c.Conn.SetDeadline(t)
}

func (c *recordingConn) SetReadDeadline(t time.Time) error {
	c.record("SetReadDeadline", t)
	return c.Conn.SetReadDeadline(t)
}

func (c *recordingConn) SetWriteDeadline(t time.Time) error {
	c.record("SetWriteDeadline", t)
	return c.Conn.SetWriteDeadline(t)
}
