// Package guard holds the limits that every chatcore server (chapters 07
// and 08) puts on its connections before they have done anything worth
// trusting: how many may be open, from one address and in all; how many
// bytes of large frames they may be reading at once, and how many bytes may
// be queued for them; how many wrong passwords an address may try; how many
// presence events each is sent (Presence). They are
// given code, one home for each limit: the chapters import them rather than
// each keeping a copy, so that a limit learned in one chapter cannot be
// forgotten in the next.
//
// docs/chatcore.md ("Limits") gives every default and why it was chosen.
package guard

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
)

// Why a connection was refused by a Gate.
var (
	ErrServerFull      = errors.New("too many connections")
	ErrTooManyFromAddr = errors.New("too many connections from one address")
)

// Gate admits connections: at most max in all, at most perAddr from one
// client address (an IRC daemon's connection class) — and, so that a few
// addresses cannot fill the server between them, a reserve.
//
// The reserve is the last eighth of max. Once the server is that full, a
// new connection is admitted only from an address that holds fewer than
// Small() connections (a sixteenth of perAddr): the per-address cap shrinks
// from perAddr to Small() when the global cap is near. Without it, 9
// addresses × 512 connections (4,608) fill the default 4,096 and every
// honest user is told Server busy. With it, those 9 addresses get 3,584 +
// 2 × 32, and 448 places stay for addresses that hold a few: an attacker
// who wants them too needs 14 more addresses, and one behind a NAT with
// 32 users is still let in.
type Gate struct {
	max, perAddr int

	mu     sync.Mutex
	total  int
	byAddr map[string]int
}

// NewGate makes a gate for at most max connections, perAddr from one
// address.
func NewGate(max, perAddr int) *Gate {
	return &Gate{max: max, perAddr: perAddr, byAddr: make(map[string]int)}
}

// Reserve is how many of the connections are kept for addresses that hold
// fewer than Small(): an eighth of max (0 when max is under 8).
func (g *Gate) Reserve() int { return g.max / 8 }

// Small is how many connections an address may hold and still take a
// place of the reserve: a sixteenth of perAddr, at least 1 (32 by default:
// a classroom or an office behind one NAT).
func (g *Gate) Small() int { return max(1, g.perAddr/16) }

// Admit counts a new connection from addr, or refuses it with
// ErrServerFull or ErrTooManyFromAddr. Every admitted connection must be
// given back with Leave.
func (g *Gate) Admit(addr string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	held := g.byAddr[addr]
	switch {
	case g.total >= g.max:
		return ErrServerFull
	case held >= g.perAddr:
		return ErrTooManyFromAddr
	case g.total >= g.max-g.Reserve() && held >= g.Small():
		return ErrTooManyFromAddr // the reserve is for addresses that hold a few
	}
	g.total++
	g.byAddr[addr] = held + 1
	return nil
}

// Leave gives back a connection that Admit counted for addr.
func (g *Gate) Leave(addr string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.total--
	if g.byAddr[addr]--; g.byAddr[addr] <= 0 {
		delete(g.byAddr, addr)
	}
}

// Budget is a number of bytes that several connections draw on together.
// On the input side it is the memory of the large frames they are reading
// at once: a reader takes a frame's size before it reads the body, and
// gives it back once the frame is handled; a frame that does not fit is
// refused before a byte of its body is held. 600 connections that each
// begin a 1 MiB frame and send it slowly would otherwise hold 600 MiB.
//
// On the output side it is the bytes queued for every client together:
// each queued frame is taken when it is queued and given back when it is
// written or discarded. An outbox bounded per connection is not bounded
// per server: 600 clients that each asked for 6 MiB of history and read
// nothing held 1.2 GiB. What a server may refuse with an answer (a large
// reply: Server busy.) draws with TakeOptional, which leaves the other
// half for what it may not refuse (chat messages, events, small replies).
type Budget struct {
	limit int64
	used  atomic.Int64
}

// NewBudget makes a budget of limit bytes.
func NewBudget(limit int) *Budget { return &Budget{limit: int64(limit)} }

// Take reserves n bytes and reports whether they fit.
func (b *Budget) Take(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

// TakeOptional reserves n bytes and reports whether they fit in the first
// half of the budget: for output the server may refuse, so that however
// much of it is asked for, half the budget stays for output it may not.
func (b *Budget) TakeOptional(n int64) bool {
	if b.used.Add(n) > b.limit/2 {
		b.used.Add(-n)
		return false
	}
	return true
}

// Spent reports whether the first half of the budget, TakeOptional's, is
// used up: a request whose answer would draw on it can be refused before
// any work is done for it.
func (b *Budget) Spent() bool { return b.used.Load() >= b.limit/2 }

// Reads bounds the requests whose answers are large and costly to make (a
// history: up to a 1 MiB frame read from the store, then queued for a
// client that may never read it). A burst of them must not take the store
// and the CPU from logins and chat messages, nor do work for an answer the
// output budget would refuse anyway.
type Reads struct {
	slots  chan struct{}
	output *Budget
}

// NewReads lets at most n such requests run at once, and none while the
// half of output that large replies may use is spent.
func NewReads(n int, output *Budget) *Reads {
	return &Reads{slots: make(chan struct{}, n), output: output}
}

// Enter reports whether a request may be served now, and if so returns the
// func that ends it. It never waits: a server answers one it refuses Server
// busy., and the client may ask again.
func (r *Reads) Enter() (done func(), ok bool) {
	if r.output.Spent() {
		return nil, false
	}
	select {
	case r.slots <- struct{}{}:
		return func() { <-r.slots }, true
	default:
		return nil, false
	}
}

// Give returns n bytes that Take or TakeOptional reserved.
func (b *Budget) Give(n int64) { b.used.Add(-n) }

// Used is the bytes reserved now (for tests and metrics).
func (b *Budget) Used() int64 { return b.used.Load() }

// Host is the address a connection is counted under: its IP, without the
// port.
func Host(nc net.Conn) string {
	addr := nc.RemoteAddr().String()
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}
