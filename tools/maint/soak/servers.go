//go:build linux

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"serverlab/tools/given/stockfile"
	"serverlab/tools/given/wire"
)

func serverNames() []string {
	var names []string
	for _, s := range servers() {
		names = append(names, s.name)
	}
	return names
}

// servers are the course's reference servers, in chapter order.
func servers() []server {
	chatArgs := func(dir string, port int) []string {
		return []string{"-addr", "127.0.0.1:" + strconv.Itoa(port), "-users", filepath.Join(dir, "users.txt")}
	}
	stockArgs := func(dir string, port int) []string {
		return []string{"-file", filepath.Join(dir, "stock.txt"), "-sync", "2s", strconv.Itoa(port)}
	}
	chatBound := "32 MiB + 1 MiB (-max-pending) per connected client"
	return []server{
		{name: "ch02", pkg: "./solutions/02/cmd/chatserver", args: chatArgs, setup: chatSetup,
			slowloris: string(loginFrame("n0", "pw")), nonReader: chatNonReader, extra: chatBurster,
			client: chatClient, clients: 4, goal: 500 * time.Millisecond, goalWhy: "a private message delivered",
			rssMiB: 32 + chatClients, rssWhy: chatBound},
		{name: "ch03", pkg: "./solutions/03/cmd/jobserver", args: func(dir string, port int) []string {
			return []string{"-addr", "127.0.0.1:" + strconv.Itoa(port), "-workers", "2"}
		}, setup: func(string) error { return nil },
			slowloris: "HASH slowloris", nonReader: jobNonReader, extra: jobBomber,
			client: jobClient, clients: 4, goal: 250 * time.Millisecond, goalWhy: "HASH a answered",
			rssMiB: 64, rssWhy: "64 MiB: bounded queue (-queue) of small jobs"},
		{name: "ch04", pkg: "./solutions/04/cmd/stockserver", args: stockArgs, setup: stockSetup,
			slowloris: "buy 1 1", nonReader: stockNonReader, client: stockClient, clients: 4, check: stockCheck,
			goal: 250 * time.Millisecond, goalWhy: "a trade acknowledged", rssMiB: 64, rssWhy: "64 MiB: 4 workers, 8 KiB records"},
		{name: "ch05-chat", pkg: "./solutions/05/cmd/chatserver", args: chatArgs, setup: chatSetup,
			slowloris: string(loginFrame("n0", "pw")), nonReader: chatNonReader, extra: chatBurster,
			client: chatClient, clients: 4, goal: 500 * time.Millisecond, goalWhy: "a private message delivered",
			rssMiB: 32 + chatClients, rssWhy: chatBound},
		{name: "ch05-stock", pkg: "./solutions/05/cmd/stockserver", args: stockArgs, setup: stockSetup,
			slowloris: "buy 1 1", nonReader: stockNonReader, client: stockClient, clients: 4, check: stockCheck,
			goal: 250 * time.Millisecond, goalWhy: "a trade acknowledged", rssMiB: 64, rssWhy: "64 MiB: one event loop, 8 KiB records"},
		{name: "ch06", pkg: "./solutions/06/cmd/wserver", args: func(dir string, port int) []string {
			return []string{"-addr", "127.0.0.1", "-p", strconv.Itoa(port), "-d", filepath.Join(dir, "www"), "-t", "64", "-b", "64"}
		}, setup: webSetup,
			slowloris: "GET /small.html HTTP/1.0\r\nHost: soak\r\n", nonReader: webNonReader,
			client: webClient, clients: 4, goal: 250 * time.Millisecond, goalWhy: "a 1 KiB file served",
			rssMiB: 64, rssWhy: "64 MiB: files are streamed (sendfile), -b 64 slots"},
		chatcoreServer(),
	}
}

// ---- chat (ch02, ch05): protocol v1 frames

// chatClients is how many users the soak logs in at most: 4 pairs of
// well-behaved clients, 20 non-readers, 1 burster, slowloris and spares.
const chatClients = 48

func chatSetup(dir string) error {
	var b strings.Builder
	for i := range chatClients {
		fmt.Fprintf(&b, "u%d pw 127.0.0.1 0\nw%d pw 127.0.0.1 0\n", i, i)
	}
	for _, n := range []string{"n0", "burst"} {
		fmt.Fprintf(&b, "%s pw 127.0.0.1 0\n", n)
	}
	return os.WriteFile(filepath.Join(dir, "users.txt"), []byte(b.String()), 0o644)
}

func loginFrame(user, pw string) []byte {
	return mustEncode(wire.Frame{Type: wire.Login, Sender: user, Payload: []byte(pw)})
}

// mustEncode encodes a frame the soak built itself: an error is a bug here.
func mustEncode(f wire.Frame) []byte {
	b, err := wire.Encode(f)
	if err != nil {
		panic(fmt.Sprintf("soak: encoding %v: %v", f, err))
	}
	return b
}

// chatLogin dials and logs user in.
func chatLogin(addr, user string) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(soakTimeout))
	if _, err := c.Write(loginFrame(user, "pw")); err != nil {
		c.Close()
		return nil, err
	}
	f, err := wire.ReadFrame(c)
	if err != nil || f.Type != wire.Login || string(f.Payload) != "OK" {
		c.Close()
		return nil, fmt.Errorf("login %s: %v %v", user, f, err)
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

var chatUsers struct {
	sync.Mutex
	next map[string]int
}

// chatUser hands out the next user name <prefix><i> (wrapping around): "w"
// for the well-behaved clients, "u" for the non-readers, so that an attacker
// never logs in under a well-behaved client's name.
func chatUser(prefix string) string {
	chatUsers.Lock()
	defer chatUsers.Unlock()
	if chatUsers.next == nil {
		chatUsers.next = map[string]int{}
	}
	n := chatUsers.next[prefix]
	chatUsers.next[prefix]++
	return prefix + strconv.Itoa(n%chatClients)
}

func chatNonReader(addr string) (net.Conn, []byte, error) {
	user := chatUser("u")
	c, err := chatLogin(addr, user)
	if err != nil {
		return nil, nil, err
	}
	return c, mustEncode(wire.Frame{Type: wire.StatusUpdate, Sender: user, Payload: []byte("away")}), nil
}

// chatBurster logs in and sends bursts of 16 broadcasts of 64 KiB a second:
// everybody must receive them, and non-readers must not make the server
// grow without bound or drop readers.
func chatBurster(addr string, stop <-chan struct{}, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stopped(stop) {
			c, err := chatLogin(addr, "burst")
			if err != nil {
				pause(stop, 200*time.Millisecond)
				continue
			}
			go io.Copy(io.Discard, c) // the burster reads what it gets
			frame := mustEncode(wire.Frame{Type: wire.Broadcast, Sender: "burst", Target: wire.Everyone,
				Payload: bytes.Repeat([]byte("b"), wire.MaxPayload)})
			for !stopped(stop) {
				c.SetWriteDeadline(time.Now().Add(soakTimeout))
				var err error
				for range 16 {
					if _, err = c.Write(frame); err != nil {
						break
					}
				}
				if err != nil {
					break
				}
				pause(stop, time.Second)
			}
			c.Close()
		}
	}()
}

// chatClient is a pair of well-behaved users: one sends the other a private
// message every 50 ms; both read everything they get. The latency is the
// message's time from send to delivery; a message sent and never delivered
// is lost.
func chatClient(addr string, stop <-chan struct{}, st *stats) {
	from, to := chatUser("w"), chatUser("w")
	for !stopped(stop) {
		a, err := chatLogin(addr, from)
		if err != nil {
			st.fail(err)
			pause(stop, 200*time.Millisecond)
			continue
		}
		b, err := chatLogin(addr, to)
		if err != nil {
			a.Close()
			st.fail(err)
			pause(stop, 200*time.Millisecond)
			continue
		}
		chatPair(a, b, from, to, stop, st)
		a.Close()
		b.Close()
	}
}

func chatPair(a, b net.Conn, from, to string, stop <-chan struct{}, st *stats) {
	var mu sync.Mutex
	sent := map[int]time.Time{}
	done := make(chan struct{})
	go io.Copy(io.Discard, a) // the sender reads broadcasts too
	go func() {
		defer close(done)
		for {
			b.SetReadDeadline(time.Now().Add(soakTimeout))
			f, err := wire.ReadFrame(b)
			if err != nil {
				mu.Lock()
				if len(sent) > 0 || !stopped(stop) {
					st.fail(fmt.Errorf("receiver: %w (%d messages in flight)", err, len(sent)))
				}
				mu.Unlock()
				return
			}
			if f.Type != wire.PrivateMsg {
				continue
			}
			seq, _ := strconv.Atoi(string(f.Payload))
			mu.Lock()
			if t, ok := sent[seq]; ok {
				st.ok(time.Since(t))
				delete(sent, seq)
			}
			finished := stopped(stop) && len(sent) == 0
			mu.Unlock()
			if finished {
				return
			}
		}
	}()
	for seq := 0; !stopped(stop); seq++ {
		frame := mustEncode(wire.Frame{Type: wire.PrivateMsg, Sender: from, Target: to, Payload: []byte(strconv.Itoa(seq))})
		mu.Lock()
		sent[seq] = time.Now()
		mu.Unlock()
		a.SetWriteDeadline(time.Now().Add(soakTimeout))
		if _, err := a.Write(frame); err != nil {
			st.fail(err)
			break
		}
		pause(stop, 50*time.Millisecond)
	}
	// Give the last messages time to arrive, then count what never did.
	select {
	case <-done:
	case <-time.After(soakTimeout):
	}
	b.Close()
	<-done
	mu.Lock()
	st.mu.Lock()
	st.lost += int64(len(sent))
	st.mu.Unlock()
	mu.Unlock()
}

// ---- jobs (ch03)

// hashA is the job protocol's answer to HASH a (docs/protocols.md §2).
const hashA = "4993892634952068459"

func jobClient(addr string, stop <-chan struct{}, st *stats) {
	for !stopped(stop) {
		lc, err := dialLine(addr)
		if err != nil {
			st.fail(err)
			pause(stop, 200*time.Millisecond)
			continue
		}
		for !stopped(stop) {
			t := time.Now()
			lc.c.SetDeadline(t.Add(soakTimeout))
			if _, err = io.WriteString(lc.c, "HASH a\n"); err != nil {
				break
			}
			var line string
			if line, err = lc.r.ReadString('\n'); err != nil {
				st.mu.Lock()
				st.lost++ // a job sent and never answered
				st.mu.Unlock()
				break
			}
			if f := strings.Fields(line); len(f) != 3 || f[0] != "OK" || f[2] != hashA {
				err = fmt.Errorf("HASH a answered %q", line)
				break
			}
			st.ok(time.Since(t))
			pause(stop, 20*time.Millisecond)
		}
		if err != nil {
			st.fail(err)
		}
		lc.c.Close()
	}
}

func jobNonReader(addr string) (net.Conn, []byte, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, nil, err
	}
	again := []byte(strings.Repeat("HASH never read\n", 256))
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.Write(again)
	return c, again, nil
}

// jobBomber sends the cheapest expensive request there is: PRIME of the
// largest 64-bit prime (27 bytes, seconds of CPU), one every 2 s.
func jobBomber(addr string, stop <-chan struct{}, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stopped(stop) {
			c, err := net.DialTimeout("tcp", addr, 2*time.Second)
			if err == nil {
				c.SetWriteDeadline(time.Now().Add(time.Second))
				io.WriteString(c, "PRIME 18446744073709551557\n")
				pause(stop, 2*time.Second)
				c.Close()
			} else {
				pause(stop, 2*time.Second)
			}
		}
	}()
}

// ---- stock (ch04, ch05)

const stockStart = 1000000

func stockSetup(dir string) error {
	var b strings.Builder
	for id := 1; id <= 10; id++ {
		fmt.Fprintf(&b, "%d %d %d\n", id, stockStart, 100*id)
	}
	return os.WriteFile(filepath.Join(dir, "stock.txt"), []byte(b.String()), 0o644)
}

const recordSize = 8192 // every stock reply is one 8192-byte record

// stockClient buys stock 1 and sells stock 2, one share at a time, and
// counts the trades the server acknowledged.
func stockClient(addr string, stop <-chan struct{}, st *stats) {
	rec := make([]byte, recordSize)
	for !stopped(stop) {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			st.fail(err)
			pause(stop, 200*time.Millisecond)
			continue
		}
		for i := 0; !stopped(stop); i++ {
			req, want, kind := "buy 1 1\n", "[buy]success\n", "buy 1"
			if i%2 == 1 {
				req, want, kind = "sell 2 1\n", "[sell]success\n", "sell 2"
			}
			t := time.Now()
			c.SetDeadline(t.Add(soakTimeout))
			st.ack("sent "+kind, 1) // may be applied even if its reply never comes
			if _, err = io.WriteString(c, req); err != nil {
				break
			}
			if _, err = io.ReadFull(c, rec); err != nil {
				break
			}
			if !bytes.HasPrefix(rec, []byte(want)) {
				err = fmt.Errorf("%q answered %q", strings.TrimSpace(req), bytes.TrimRight(rec[:64], "\x00"))
				break
			}
			st.ok(time.Since(t))
			st.ack(kind, 1)
			pause(stop, 20*time.Millisecond)
		}
		if err != nil {
			st.fail(err)
		}
		io.WriteString(c, "exit\n")
		c.Close()
	}
}

func stockNonReader(addr string) (net.Conn, []byte, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, nil, err
	}
	again := []byte(strings.Repeat("show\n", 64))
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.Write(again)
	return c, again, nil
}

// stockCheck compares stock.txt, written by the stopped server, with the
// trades the clients sent and the server acknowledged. Every acknowledged
// trade must be in the file; a trade sent but not acknowledged (its reply
// timed out) may or may not be, so the file's count must lie between the two.
// What is outside that range is lost (or invented) data.
func stockCheck(dir string, st *stats) (int64, string) {
	stocks, err := stockfile.Read(filepath.Join(dir, "stock.txt"))
	if err != nil {
		return 1, "stock.txt: " + err.Error()
	}
	// applied turns a stock's count into the trades it shows: buys take
	// stock 1 down, sells take stock 2 up.
	applied := map[int]func(count int64) int64{
		1: func(count int64) int64 { return stockStart - count },
		2: func(count int64) int64 { return count - stockStart },
	}
	kinds := map[int]string{1: "buy 1", 2: "sell 2"}
	var lost int64
	var why []string
	for _, s := range stocks {
		f, ok := applied[s.ID]
		if !ok {
			continue
		}
		kind := kinds[s.ID]
		got, acked, sent := f(int64(s.Count)), st.acked[kind], st.acked["sent "+kind]
		switch {
		case got < acked:
			lost += acked - got
			why = append(why, fmt.Sprintf("stock %d: %d trades in stock.txt, %d acknowledged", s.ID, got, acked))
		case got > sent:
			lost += got - sent
			why = append(why, fmt.Sprintf("stock %d: %d trades in stock.txt, only %d sent", s.ID, got, sent))
		}
	}
	return lost, strings.Join(why, "; ")
}

// ---- web (ch06)

var smallPage = bytes.Repeat([]byte("s"), 1024)

func webSetup(dir string) error {
	www := filepath.Join(dir, "www")
	if err := os.MkdirAll(www, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(www, "small.html"), smallPage, 0o644); err != nil {
		return err
	}
	big, err := os.Create(filepath.Join(www, "big.bin"))
	if err != nil {
		return err
	}
	defer big.Close()
	return big.Truncate(8 << 20) // sparse
}

var webWant = []byte(fmt.Sprintf("HTTP/1.0 200 OK\r\nServer: OSTEP WebServer\r\nContent-Length: 1024\r\nContent-Type: text/html\r\n\r\n%s", smallPage))

func webClient(addr string, stop <-chan struct{}, st *stats) {
	for !stopped(stop) {
		t := time.Now()
		got, err := webGet(addr, "/small.html")
		switch {
		case err != nil:
			st.fail(err)
			pause(stop, 20*time.Millisecond)
		case !bytes.Equal(got, webWant):
			st.fail(fmt.Errorf("GET /small.html: got %q", got[:min(len(got), 80)]))
			st.mu.Lock()
			st.lost++ // a wrong file
			st.mu.Unlock()
		default:
			st.ok(time.Since(t))
		}
		pause(stop, 10*time.Millisecond)
	}
}

func webGet(addr, uri string) ([]byte, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(soakTimeout))
	if _, err := io.WriteString(c, "GET "+uri+" HTTP/1.0\r\n\r\n"); err != nil {
		return nil, err
	}
	return io.ReadAll(bufio.NewReader(c))
}

func webNonReader(addr string) (net.Conn, []byte, error) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return nil, nil, err
	}
	c.(*net.TCPConn).SetReadBuffer(4096)
	c.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := io.WriteString(c, "GET /big.bin HTTP/1.0\r\n\r\n"); err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, nil, nil
}
