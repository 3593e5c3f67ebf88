//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tools/given/chatcore/proto"
)

// ---- chatcore (ch07): the original's protocol, and the attacks of issue 24

// chatcoreServer is chapter 07's entry: its well-behaved clients chat in one
// channel and time their own echo; the attackers guess passwords, send the
// largest names and requests a frame can carry, and begin 1 MiB frames
// without logging in.
func chatcoreServer() server {
	return server{name: "ch07", pkg: "./solutions/07/cmd/chatcore-server",
		args: func(dir string, port int) []string {
			return []string{"--ip", "127.0.0.1", "--port", strconv.Itoa(port), "--db", filepath.Join(dir, "chat.db"), "--log", "error"}
		},
		setup:     func(string) error { return nil },
		slowloris: string(mustProto(proto.AuthenticateRequest{RequestID: 1, Name: "slow", Password: "loris"})),
		nonReader: chatcoreNonReader, extra: chatcoreAttackers, client: chatcoreClient, clients: 4,
		goal: 500 * time.Millisecond, goalWhy: "a chat message stored and echoed",
		rssMiB: 400, rssWhy: "400 MiB: 2 hashes of 7 MiB (19 MiB before 2026-12-07), 64 MiB of unauthenticated input, 4 MiB outboxes, 64 KiB read buffers"}
}

func mustProto(m proto.Message) []byte {
	b, err := proto.Encode(m)
	if err != nil {
		panic(fmt.Sprintf("soak: encoding %v: %v", m.Type(), err))
	}
	return b
}

var chatcoreNext atomic.Int64

// chatcoreSession is one logged-in connection of the soak.
type chatcoreSession struct {
	nc   net.Conn
	r    *bufio.Reader
	id   uint64
	user uint32
}

// call sends req and reads until its answer.
func (s *chatcoreSession) call(req proto.Requester) (proto.Message, error) {
	s.nc.SetDeadline(time.Now().Add(soakTimeout))
	defer s.nc.SetDeadline(time.Time{})
	if _, err := s.nc.Write(mustProto(req)); err != nil {
		return nil, err
	}
	for {
		m, err := proto.Read(s.r)
		if err != nil {
			return nil, err
		}
		if r, ok := m.(proto.Requester); ok && r.Request() == req.Request() {
			return m, nil
		}
	}
}

func (s *chatcoreSession) next() uint64 { s.id++; return s.id }

// chatcoreLogin dials, registers a fresh user with the given prefix, logs it
// in and joins the soak's channel.
func chatcoreLogin(addr, prefix string) (*chatcoreSession, uint32, error) {
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, 0, err
	}
	s := &chatcoreSession{nc: nc, r: bufio.NewReader(nc)}
	name := fmt.Sprintf("%s%d", prefix, chatcoreNext.Add(1))
	fail := func(what string, m proto.Message, err error) (*chatcoreSession, uint32, error) {
		nc.Close()
		return nil, 0, fmt.Errorf("%s %s: %v %v", what, name, m, err)
	}
	if m, err := s.call(proto.CreateUserRequest{RequestID: s.next(), Name: name, Password: "soak-" + name}); err != nil || m.Type() != proto.TypeCreateUserResponse {
		return fail("create", m, err)
	}
	m, err := s.call(proto.AuthenticateRequest{RequestID: s.next(), Name: name, Password: "soak-" + name})
	a, ok := m.(proto.AuthenticateResponse)
	if err != nil || !ok {
		return fail("login", m, err)
	}
	s.user = a.User.ID
	m, err = s.call(proto.CreateChannelRequest{RequestID: s.next(), Name: "soak"})
	ch, ok := m.(proto.CreateChannelResponse)
	if err != nil || !ok {
		return fail("channel", m, err)
	}
	if m, err := s.call(proto.JoinChannelRequest{RequestID: s.next(), ChannelID: ch.Channel.ID}); err != nil || m.Type() != proto.TypeJoinChannelResponse {
		return fail("join", m, err)
	}
	return s, ch.Channel.ID, nil
}

// chatcoreClient is a well-behaved user: it sends a chat message every
// 50 ms and waits for its own echo (the acknowledgement: stored). The
// latency is the message's time from send to echo.
func chatcoreClient(addr string, stop <-chan struct{}, st *stats) {
	for !stopped(stop) {
		s, ch, err := chatcoreLogin(addr, "w")
		if err != nil {
			st.fail(err)
			pause(stop, 200*time.Millisecond)
			continue
		}
		for i := 0; !stopped(stop); i++ {
			content := fmt.Sprintf("w%d-%d", s.user, i)
			want := mustProto(proto.ReceiveChat{ChannelID: ch, Content: content, UserID: s.user})
			start := time.Now()
			s.nc.SetDeadline(start.Add(soakTimeout))
			if _, err := s.nc.Write(mustProto(proto.WriteChat{Content: content})); err != nil {
				st.fail(err)
				break
			}
			if err := chatcoreAwait(s.r, want[proto.HeaderSize:]); err != nil {
				st.fail(fmt.Errorf("echo of %q: %w", content, err))
				break
			}
			st.ok(time.Since(start))
			st.ack("messages", 1)
			pause(stop, 50*time.Millisecond)
		}
		s.nc.Close()
	}
}

// chatcoreAwait reads frames until one with body want.
func chatcoreAwait(r *bufio.Reader, want []byte) error {
	for {
		body, err := proto.ReadFrame(r, nil)
		if err != nil {
			return err
		}
		if string(body) == string(want) {
			return nil
		}
	}
}

// chatcoreNonReader logs in and asks for the history again and again
// without reading: the outbox's bound must drop it.
func chatcoreNonReader(addr string) (net.Conn, []byte, error) {
	s, ch, err := chatcoreLogin(addr, "u")
	if err != nil {
		return nil, nil, err
	}
	return s.nc, mustProto(proto.GetChatsRequest{RequestID: 7, ChannelID: ch, Limit: 1000}), nil
}

// chatcoreAttackers are the attacks of issue 24, each bounded:
//   - 8 guessers, each a connection of wrong passwords, reconnecting when
//     closed (the failure limits must refuse them without hashes);
//   - one abuser of sizes: names of 1 MB, GetUsers with 100 000 ids,
//     GetUser of a name whose answer cannot fit in a frame (each must be
//     answered, fast);
//   - 20 strangers that each begin a 1 MiB frame and dawdle (the
//     unauthenticated input budget must bound them).
func chatcoreAttackers(addr string, stop <-chan struct{}, wg *sync.WaitGroup) {
	for i := range 8 {
		wg.Go(func() { chatcoreGuesser(addr, i, stop) })
	}
	wg.Go(func() { chatcoreSizes(addr, stop) })
	for range 20 {
		wg.Go(func() { chatcoreStranger(addr, stop) })
	}
}

func chatcoreGuesser(addr string, i int, stop <-chan struct{}) {
	for !stopped(stop) {
		nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			pause(stop, 200*time.Millisecond)
			continue
		}
		s := &chatcoreSession{nc: nc, r: bufio.NewReader(nc)}
		for !stopped(stop) {
			if _, err := s.call(proto.AuthenticateRequest{RequestID: s.next(), Name: fmt.Sprintf("w%d", i+1), Password: "guess"}); err != nil {
				break
			}
			pause(stop, 20*time.Millisecond)
		}
		nc.Close()
	}
}

func chatcoreSizes(addr string, stop <-chan struct{}) {
	huge := strings.Repeat("n", 1_000_000)
	ids := make([]uint32, 100_000)
	for !stopped(stop) {
		s, _, err := chatcoreLogin(addr, "a")
		if err != nil {
			pause(stop, 200*time.Millisecond)
			continue
		}
		for !stopped(stop) {
			reqs := []proto.Requester{
				proto.CreateUserRequest{RequestID: s.next(), Name: huge, Password: "x"},
				proto.CreateChannelRequest{RequestID: s.next(), Name: huge},
				proto.GetUsersRequest{RequestID: s.next(), UserIDs: ids},
				proto.GetUserRequest{RequestID: s.next(), Name: huge + strings.Repeat("m", 48_000)},
			}
			failed := false
			for _, r := range reqs {
				if _, err := s.call(r); err != nil {
					failed = true
					break
				}
			}
			if failed {
				break
			}
			pause(stop, 200*time.Millisecond)
		}
		s.nc.Close()
	}
}

func chatcoreStranger(addr string, stop <-chan struct{}) {
	const req = `{"payload":{"request_id":1},"type_id":119}`
	frame := append(mustHeader(proto.MaxFrame), req...)
	frame = append(frame, strings.Repeat(" ", proto.MaxFrame-len(req))...)
	for !stopped(stop) {
		nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			pause(stop, 200*time.Millisecond)
			continue
		}
		go io.Copy(io.Discard, nc)
		// The header and 64 KiB, then one KiB a second.
		sent := proto.HeaderSize + 64<<10
		nc.SetWriteDeadline(time.Now().Add(soakTimeout))
		_, err = nc.Write(frame[:sent])
		for err == nil && sent < len(frame) && !stopped(stop) {
			pause(stop, time.Second)
			nc.SetWriteDeadline(time.Now().Add(soakTimeout))
			_, err = nc.Write(frame[sent : sent+1024])
			sent += 1024
		}
		nc.Close()
	}
}

func mustHeader(n int) []byte {
	return []byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
}
