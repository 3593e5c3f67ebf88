package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tools/loadgen/load"
	"serverlab/tools/users"
	"serverlab/tools/wire"
)

// The chat experiments' clients speak chat protocol v1 (tools/wire), which
// the course's chapter 02 and 05 servers and the original C++ servers share.
// Every client logs in with a name from the users file the experiment writes
// into the trial's folder (the servers read it: ours with -users, the
// originals from their working folder), and a goroutine per client reads
// what it receives and times every broadcast: the payload starts with its
// send time, in decimal, on this process's clock.
//
// The payload is text, not binary, because the originals keep it in a C
// string on the way through.

const chatPassword = "bench"

// chatUser is the name of client i: short, as the protocol's 31 bytes allow.
func chatUser(i int) string { return fmt.Sprintf("b%05d", i) }

// writeChatUsers writes a users file with n users for the clients to log in as.
func writeChatUsers(path string, n int) error {
	var b strings.Builder
	for i := range n {
		b.WriteString(users.User{Name: chatUser(i), Password: chatPassword, IP: "127.0.0.1", Port: 1 + i%60000}.Line())
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// loginParallelism bounds the logins in flight: the originals listen with a
// backlog of 10, and a dropped SYN is retried a second later, which would be
// measured as a slow login.
const loginParallelism = 8

// chatRoom is the clients of one trial.
type chatRoom struct {
	start     time.Time // t = 0 of the payloads' send times
	clients   []*chatClient
	recs      []*load.Recorder // stripes: client i records into recs[i%len]
	received  atomic.Int64
	receiving sync.WaitGroup
}

// chatClient is one logged-in client.
type chatClient struct {
	name string
	conn net.Conn
	mu   sync.Mutex // one broadcast at a time
}

// joinChat logs n clients in to addr and starts their receivers. Clients
// that cannot log in are left out (len(room.clients) says how many could);
// joinChat fails only if none could.
func joinChat(ctx context.Context, addr string, n int, timeout time.Duration) (*chatRoom, error) {
	room := &chatRoom{start: time.Now()}
	for range min(n, 64) {
		room.recs = append(room.recs, load.NewRecorder())
	}
	clients := make([]*chatClient, n)
	errs := make([]error, n)
	slots := make(chan struct{}, loginParallelism)
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			clients[i], errs[i] = login(ctx, addr, chatUser(i), timeout)
		})
	}
	wg.Wait()
	for i, c := range clients {
		if c != nil {
			rec := room.recs[i%len(room.recs)]
			room.clients = append(room.clients, c)
			room.receiving.Go(func() { room.receive(c, rec) })
		}
	}
	if len(room.clients) == 0 {
		return nil, fmt.Errorf("none of %d clients could log in: %w", n, errs[0])
	}
	return room, nil
}

func login(ctx context.Context, addr, name string, timeout time.Duration) (*chatClient, error) {
	conn, err := load.Dial(ctx, "tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(time.Now().Add(timeout))
	err = wire.WriteFrame(conn, wire.Frame{Type: wire.Login, Sender: name, Payload: []byte(chatPassword)})
	var reply wire.Frame
	if err == nil {
		reply, err = wire.ReadFrame(conn)
	}
	if err == nil && (reply.Type != wire.Login || string(reply.Payload) != wire.ReplyOK) {
		err = fmt.Errorf("%w: login %s: %v", load.ErrBadReply, name, reply)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	conn.SetDeadline(time.Time{})
	return &chatClient{name: name, conn: conn}, nil
}

// receive times every broadcast c receives until its connection closes.
func (room *chatRoom) receive(c *chatClient, rec *load.Recorder) {
	r := bufio.NewReader(c.conn)
	for {
		f, err := wire.ReadFrame(r)
		if err != nil {
			return
		}
		if sent, ok := sendTime(f); ok && f.Type == wire.Broadcast {
			rec.Succeed(time.Since(room.start) - sent)
			room.received.Add(1)
		}
	}
}

// broadcast sends one timestamped broadcast of size bytes from c.
func (room *chatRoom) broadcast(c *chatClient, size int, timeout time.Duration) error {
	payload := strconv.AppendInt(nil, int64(time.Since(room.start)), 10)
	payload = append(payload, ' ')
	for len(payload) < size {
		payload = append(payload, '.')
	}
	b, err := wire.Encode(wire.Frame{Type: wire.Broadcast, Sender: c.name, Target: wire.Everyone, Payload: payload})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.conn.SetWriteDeadline(time.Now().Add(timeout))
	_, err = c.conn.Write(b)
	return err
}

// sendTime reads the send time at the start of a broadcast's payload.
func sendTime(f wire.Frame) (time.Duration, bool) {
	num, _, _ := strings.Cut(string(f.Payload), " ")
	ns, err := strconv.ParseInt(num, 10, 64)
	return time.Duration(ns), err == nil
}

// await waits until want deliveries have arrived, ctx is done or timeout
// has passed without a new delivery; it returns how many arrived.
func (room *chatRoom) await(ctx context.Context, want int64, timeout time.Duration) int64 {
	last, lastChange := room.received.Load(), time.Now()
	for last < want && time.Since(lastChange) < timeout && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond) // polling a counter: the receivers do not signal
		if n := room.received.Load(); n != last {
			last, lastChange = n, time.Now()
		}
	}
	return last
}

// result merges the receivers' recorders; lost deliveries count as failures.
func (room *chatRoom) result(wall time.Duration, lost int64) load.Result {
	all := load.NewRecorder()
	for _, r := range room.recs {
		all.Merge(r)
	}
	for range lost {
		all.Fail(load.WithKind("lost", fmt.Errorf("a broadcast never reached a logged-in client")))
	}
	return all.Result(wall)
}

// close disconnects every client and waits for the receivers.
func (room *chatRoom) close() {
	for _, c := range room.clients {
		c.conn.Close()
	}
	room.receiving.Wait()
}
