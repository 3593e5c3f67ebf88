// Package chatload is the chat load client: it re-creates the original
// chat system's load_test.py and stress_test.py against a chat protocol v1
// server (tools/given/wire: chapters 02 and 05, and the original C++ servers).
// N clients log in (Join) and broadcast their messages (Room.Run), and every
// receiver timestamps every delivery. A run measures the per-delivery
// latency (send → one receiver), the fan-out latency (send → the last
// receiver) and the deliveries lost.
//
// loadgen's chat mode and tools/cmd/bench's chat and c10k experiments drive
// their servers with it, so that every chat number in the course is
// measured the same way.
package chatload

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tools/given/users"
	"serverlab/tools/given/wire"
	"serverlab/tools/internal/load"
)

// Password is every load-test user's password.
const Password = "loadgen"

// Names are n client names: prefix followed by 0 … n−1. A random prefix
// keeps runs that share a users file apart; names must fit the protocol's
// wire.MaxName bytes.
func Names(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = prefix + strconv.Itoa(i)
	}
	return names
}

// AppendUsers appends the named users to the users file at path, creating it:
// the fast way to make a thousand clients known to a chat server that reads
// the file (the course's with -users, the originals from their working
// folder).
func AppendUsers(path string, names []string) error {
	var b strings.Builder
	for _, name := range names {
		b.WriteString(users.User{Name: name, Password: Password, IP: "127.0.0.1", Port: 0}.Line())
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(b.String())
	return errors.Join(err, f.Close())
}

// Register registers the named users one by one with the discovery server
// at addr (iterative, as in chapter 01).
func Register(ctx context.Context, addr string, names []string, timeout time.Duration) error {
	for _, name := range names {
		if err := registerUser(ctx, addr, name, timeout); err != nil {
			return fmt.Errorf("registering %s with %s: %w", name, addr, err)
		}
	}
	return nil
}

func registerUser(ctx context.Context, addr, name string, timeout time.Duration) error {
	conn, err := load.Dial(ctx, "tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(timeout))
	reply, err := request(conn, wire.Frame{Type: wire.Registration, Sender: name, Payload: []byte(Password)})
	if err == nil && string(reply.Payload) != wire.ReplyOK {
		err = fmt.Errorf("%w: %v", load.ErrBadReply, reply)
	}
	return err
}

func request(conn net.Conn, f wire.Frame) (wire.Frame, error) {
	if err := wire.WriteFrame(conn, f); err != nil {
		return wire.Frame{}, err
	}
	return wire.ReadFrame(conn)
}

// The receive engines. Both measure the same thing; they differ in what the
// measuring costs. With a goroutine per client, each broadcast wakes N−1
// goroutines in the load generator, which on a small machine competes with
// the server and adds its own scheduling delay to every delivery. The epoll
// engine reads every connection from one goroutine and timestamps each
// delivery as soon as its read returns.
const (
	Goroutines = "goroutines"
	Epoll      = "epoll"
)

// EpollSupported says whether this platform has the Epoll engine (Linux).
const EpollSupported = epollSupported

// Engines are the receive engines this platform has.
func Engines() []string {
	if EpollSupported {
		return []string{Goroutines, Epoll}
	}
	return []string{Goroutines}
}

// CheckEngine says what is wrong with engine name, if anything. Its
// messages speak of the -engine flag that loadgen and bench both have.
func CheckEngine(name string) error {
	switch {
	case name == Goroutines:
		return nil
	case name == Epoll && EpollSupported:
		return nil
	case name == Epoll:
		return errors.New("-engine epoll works on Linux only; use -engine goroutines")
	}
	return fmt.Errorf("-engine %q: want %s or %s", name, Goroutines, Epoll)
}

// Config is how the clients connect and receive.
type Config struct {
	Addr string // the chat server's
	// Timeout bounds each connection set-up, login and write, and how long
	// Run waits, once every sender is done, for deliveries still missing:
	// those are lost.
	Timeout time.Duration
	// Logins is how many logins Join has in flight at once; 0 = all at
	// once. The originals listen with a backlog of 10, and a dropped SYN is
	// retried a second later, which would be measured as a slow login.
	Logins int
	// Engine is Goroutines ("" too) or Epoll.
	Engine string
	// KernelTimestamps (Epoll only) times each delivery by when the kernel
	// queued it on the socket (SO_TIMESTAMPNS), not when the load generator
	// read it.
	KernelTimestamps bool
}

// Plan is what one Run sends: each of the first Senders clients broadcasts
// Messages messages of Size bytes, one every Interval.
type Plan struct {
	Messages int
	// Size is the payload's bytes, at least HeaderSize (Run rounds it up).
	Size     int
	Interval time.Duration // 0 = a burst
	Senders  int           // 0 = every client
	// Turns starts the senders one after another, Interval/Senders apart:
	// a fixed total rate, the clients taking turns. Otherwise each starts at
	// a random point of the first interval, so that they do not send in
	// lockstep.
	Turns bool
}

// HeaderSize is the start of every message's payload: the sender's index,
// the message's number and its send time (nanoseconds since the run's
// start), so that a receiver can time it and the run can match deliveries
// to messages.
const HeaderSize = 24

// Result is what one Run measured.
type Result struct {
	Clients, Connected int   // asked to log in, and did
	Sent               int64 // broadcasts written
	// Expected is the deliveries the plan asks for: every broadcast to every
	// other logged-in client. Lost is those that never arrived; Delivery
	// counts them as failures, beside the sends that failed.
	Expected, Lost int64
	// Delivery is the latency from a broadcast's send to each receiver;
	// Fanout, to its last receiver, over the broadcasts every other client
	// received.
	Delivery, Fanout load.Result
}

// Room is the clients that logged in. Run it once, then Close it.
type Room struct {
	cfg      Config
	asked    int
	clients  []*client
	loginErr error
	ran      bool
}

// client is a logged-in client.
type client struct {
	net.Conn // a *net.TCPConn, whose descriptor the epoll engine reads
	name     string
	r        *bufio.Reader
	untie    func() bool
}

// Join logs the named clients in to cfg.Addr, cfg.Logins at a time. A
// client that cannot log in is left out: Connected says how many could,
// LoginError why the first one could not. The connections close when ctx
// is done, or at Close.
func Join(ctx context.Context, cfg Config, names []string) *Room {
	conns := make([]*client, len(names))
	errs := make([]error, len(names))
	var slots chan struct{} // nil: no limit
	if cfg.Logins > 0 {
		slots = make(chan struct{}, cfg.Logins)
	}
	var wg sync.WaitGroup
	for i, name := range names {
		if slots != nil {
			slots <- struct{}{}
		}
		wg.Go(func() {
			if slots != nil {
				defer func() { <-slots }()
			}
			conns[i], errs[i] = login(ctx, cfg, name)
		})
	}
	wg.Wait()
	room := &Room{cfg: cfg, asked: len(names)}
	for i, c := range conns {
		switch {
		case c != nil:
			room.clients = append(room.clients, c)
		case room.loginErr == nil:
			room.loginErr = errs[i]
		}
	}
	return room
}

// Connected is how many clients logged in.
func (room *Room) Connected() int { return len(room.clients) }

// LoginError is why the first client that could not log in could not; nil
// if every client logged in.
func (room *Room) LoginError() error { return room.loginErr }

// Close disconnects every client.
func (room *Room) Close() {
	for _, c := range room.clients {
		c.Close()
	}
}

func login(ctx context.Context, cfg Config, name string) (*client, error) {
	c, err := dial(ctx, cfg, name)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(cfg.Timeout))
	reply, err := request(c, wire.Frame{Type: wire.Login, Sender: name, Payload: []byte(Password)})
	if err == nil && string(reply.Payload) != wire.ReplyOK {
		err = fmt.Errorf("%w: %v", load.ErrBadReply, reply)
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("login %s: %w", name, err)
	}
	c.SetDeadline(time.Time{})
	c.r = bufio.NewReaderSize(c.Conn, 64<<10)
	return c, nil
}

// dial connects as load.Dial does, closing the connection once ctx is
// done, but keeps the *net.TCPConn itself so that its descriptor can be had.
func dial(ctx context.Context, cfg Config, name string) (*client, error) {
	d := net.Dialer{Timeout: cfg.Timeout}
	conn, err := d.DialContext(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	return &client{Conn: conn, name: name, untie: context.AfterFunc(ctx, func() { conn.Close() })}, nil
}

func (c *client) Close() error {
	c.untie()
	return c.Conn.Close()
}

// runState is the state of one Run shared by its clients.
type runState struct {
	cfg      Config
	plan     Plan
	start    time.Time        // t = 0 of the send times
	delivery []*load.Recorder // one per receiver stripe
	// fanout[sender*messages+seq]: deliveries of that message so far, and the
	// latest one's latency, for the fan-out latency.
	count   []atomic.Int32
	slowest []atomic.Int64
	// lastDelivery is the latest delivery's time since start: the run's wall time.
	lastDelivery atomic.Int64
	sent         atomic.Int64
}

// receiveFunc is a receive engine: until ctx is done, it reads the
// broadcasts reaching conns, conns[k] expecting want[k] of them, records
// them in run, and returns how many arrived. Once sendersDone is closed it
// waits at most cfg.Timeout more for messages still missing, which are then
// lost.
type receiveFunc func(ctx context.Context, run *runState, conns []*client, want []int64, sendersDone <-chan struct{}) (int64, error)

func receiveEngine(name string) receiveFunc {
	if name == Epoll {
		return receiveEpoll
	}
	return receiveGoroutines
}

// Run makes the clients broadcast what p says while every client receives,
// and returns what it measured; the error is the receive engine's or ctx's.
// A Room runs once: deliveries still on their way from one run would be
// taken for the next one's.
func (room *Room) Run(ctx context.Context, p Plan) (Result, error) {
	res := Result{Clients: room.asked, Connected: len(room.clients)}
	if room.ran {
		return res, errors.New("chatload: a Room runs once")
	}
	room.ran = true
	p.Size = max(p.Size, HeaderSize)
	senders := len(room.clients)
	if p.Senders > 0 {
		senders = min(senders, p.Senders)
	}
	p.Senders = senders
	run := &runState{cfg: room.cfg, plan: p, count: make([]atomic.Int32, senders*p.Messages), slowest: make([]atomic.Int64, senders*p.Messages)}
	for range min(len(room.clients), 64) {
		run.delivery = append(run.delivery, load.NewRecorder())
	}
	want := make([]int64, len(room.clients)) // a sender does not hear itself
	for k := range want {
		others := senders
		if k < senders {
			others--
		}
		want[k] = int64(p.Messages * others)
		res.Expected += want[k]
	}

	var sending sync.WaitGroup
	sendersDone := make(chan struct{})
	run.start = time.Now()
	for k, c := range room.clients[:senders] {
		rec := run.delivery[k%len(run.delivery)]
		sending.Go(func() { run.send(ctx, c, k, rec) })
	}
	go func() {
		sending.Wait()
		close(sendersDone)
	}()
	received, err := receiveEngine(room.cfg.Engine)(ctx, run, room.clients, want, sendersDone)
	<-sendersDone
	res.Sent = run.sent.Load()
	if err != nil {
		return res, err
	}

	res.Lost = res.Expected - received
	all := load.NewRecorder()
	for _, rec := range run.delivery {
		all.Merge(rec)
	}
	for range res.Lost {
		all.Fail(load.WithKind("lost", errors.New("a broadcast never reached a logged-in client")))
	}
	wall := time.Duration(run.lastDelivery.Load())
	res.Delivery = all.Result(wall)
	res.Fanout = run.fanoutResult(len(room.clients)-1, wall)
	return res, ctx.Err()
}

// send broadcasts sender k's messages, one every interval, from its start
// in the first interval (see Plan.Turns).
func (run *runState) send(ctx context.Context, c *client, k int, rec *load.Recorder) {
	p := run.plan
	next := time.Duration(0)
	switch {
	case p.Turns:
		next = p.Interval * time.Duration(k) / time.Duration(p.Senders)
	case p.Interval > 0:
		next = rand.N(p.Interval)
	}
	payload := make([]byte, p.Size)
	for seq := range p.Messages {
		if wait := time.Until(run.start.Add(next)); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return
			}
		}
		next += p.Interval
		binary.LittleEndian.PutUint64(payload[0:], uint64(k))
		binary.LittleEndian.PutUint64(payload[8:], uint64(seq))
		binary.LittleEndian.PutUint64(payload[16:], uint64(time.Since(run.start)))
		b, err := wire.Encode(wire.Frame{Type: wire.Broadcast, Sender: c.name, Target: wire.Everyone, Payload: payload})
		if err == nil {
			c.SetWriteDeadline(time.Now().Add(run.cfg.Timeout))
			_, err = c.Write(b)
		}
		if err != nil {
			rec.Fail(err)
			return
		}
		run.sent.Add(1)
	}
}

// receiveGoroutines is the goroutine-per-client engine: each client blocks
// in its own read, as a chat client would.
func receiveGoroutines(_ context.Context, run *runState, conns []*client, want []int64, sendersDone <-chan struct{}) (int64, error) {
	var received atomic.Int64
	var receiving sync.WaitGroup
	for k, c := range conns {
		rec := run.delivery[k%len(run.delivery)]
		receiving.Go(func() { received.Add(run.receive(c, want[k], rec)) })
	}
	<-sendersDone
	for _, c := range conns { // a receiver still waiting for a lost message stops at this deadline
		c.SetReadDeadline(time.Now().Add(run.cfg.Timeout))
	}
	receiving.Wait()
	return received.Load(), nil
}

// receive reads broadcasts until it has want of them or its read deadline
// passes, recording each one's latency. It returns how many it got.
func (run *runState) receive(c *client, want int64, rec *load.Recorder) int64 {
	var got int64
	for got < want {
		f, err := wire.ReadFrame(c.r)
		if err != nil {
			return got
		}
		if run.deliver(f, time.Since(run.start), rec) {
			got++
		}
	}
	return got
}

// deliver records broadcast f, which arrived at now (since the run's start),
// and reports whether it was one of this run's messages.
func (run *runState) deliver(f wire.Frame, now time.Duration, rec *load.Recorder) bool {
	if f.Type != wire.Broadcast || len(f.Payload) < HeaderSize {
		return false
	}
	sender := int(binary.LittleEndian.Uint64(f.Payload[0:]))
	seq := int(binary.LittleEndian.Uint64(f.Payload[8:]))
	sent := time.Duration(binary.LittleEndian.Uint64(f.Payload[16:]))
	id := sender*run.plan.Messages + seq
	if sender < 0 || seq < 0 || seq >= run.plan.Messages || id >= len(run.count) {
		return false // not one of this run's messages
	}
	latency := now - sent
	rec.Succeed(latency)
	run.count[id].Add(1)
	atomicMax(&run.slowest[id], int64(latency))
	atomicMax(&run.lastDelivery, int64(now))
	return true
}

func atomicMax(v *atomic.Int64, x int64) {
	for {
		old := v.Load()
		if x <= old || v.CompareAndSwap(old, x) {
			return
		}
	}
}

// fanoutResult is the latency from a message's send to its last delivery,
// over the messages that reached every other client.
func (run *runState) fanoutResult(receivers int, wall time.Duration) load.Result {
	rec := load.NewRecorder()
	for id := range run.count {
		if receivers > 0 && int(run.count[id].Load()) == receivers {
			rec.Succeed(time.Duration(run.slowest[id].Load()))
		}
	}
	return rec.Result(wall)
}
