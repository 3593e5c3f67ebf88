//go:build linux

package epolltest

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"syscall"
	"time"

	"serverlab/tests/testkit"
	"serverlab/tools/wire"
)

// smallBuffers is the socket buffer size the memory check asks for on both
// ends of a slow client's connection (Linux doubles it, and turns
// autotuning off), so that the kernel holds next to nothing of what the
// server sends it and the rest is the server's to hold.
const smallBuffers = 4096

// smallKernel bounds what the kernel holds for such a connection: both
// buffers at twice the size asked, plus one segment of up to 64 KiB that a
// send may queue past a full buffer.
const smallKernel = 2*(2*smallBuffers) + 64<<10

// smallSocket sets a socket's send and receive buffers to smallBuffers.
func smallSocket(_, _ string, rc syscall.RawConn) error {
	var err error
	if cerr := rc.Control(func(fd uintptr) {
		for _, opt := range []int{syscall.SO_RCVBUF, syscall.SO_SNDBUF} {
			if e := syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, opt, smallBuffers); e != nil {
				err = e
			}
		}
	}); cerr != nil {
		return cerr
	}
	return err
}

// listenSmall listens on 127.0.0.1:0 with small socket buffers, which the
// accepted connections inherit.
func listenSmall(k *testkit.T) net.Listener {
	k.Helper()
	ln, err := (&net.ListenConfig{Control: smallSocket}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		k.Fatalf("listen on 127.0.0.1:0: %v", err)
	}
	return ln
}

// dialSmall dials addr with small socket buffers; the connection is closed
// at cleanup.
func dialSmall(k *testkit.T, addr string) net.Conn {
	k.Helper()
	d := net.Dialer{Timeout: testkit.IOTimeout, Control: smallSocket}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		k.Fatalf("dial %s: %v", addr, err)
	}
	k.OnAbort(func() { nc.Close() })
	k.Cleanup(func() { nc.Close() })
	return nc
}

// loginSmall logs name in on a new connection with small socket buffers and
// returns it; it is closed at cleanup.
func loginSmall(k *testkit.T, addr, name string) net.Conn {
	k.Helper()
	nc := dialSmall(k, addr)
	nc.SetDeadline(time.Now().Add(testkit.IOTimeout))
	if _, err := nc.Write(testkit.Encode(wire.Frame{Type: wire.Login, Sender: name, Payload: []byte(password(name))})); err != nil {
		k.Fatalf("%s: sending the login: %v", name, err)
	}
	f, err := wire.ReadFrame(nc)
	if err != nil || f.Type != wire.Login || string(f.Payload) != "OK" {
		k.Fatalf("%s: login: want %v, got %v, %s", name, loginOK(name), f, testkit.Describe(err))
	}
	nc.SetDeadline(time.Time{})
	return nc
}

// checkSlowConsumersMemory: a client that does not read costs the server its
// unsent output and no more, at most MaxPending. Many slow clients are each
// sent a little less than MaxPending (so none is disconnected); then the
// server's live heap must be within clients × MaxPending. A loop that keeps
// the bytes the socket has already taken in front of its output, or lets
// append grow a buffer past MaxPending, holds more: the original measurement
// was 1.7 MB per slow client against a 1 MiB limit.
func checkSlowConsumersMemory(k *testkit.T, impl Impl) {
	k.Helper()
	const clients = 100
	const maxPending = 1 << 20
	const size = 32 << 10
	names := []string{"alice"}
	for i := range clients {
		names = append(names, fmt.Sprintf("slow%d", i))
	}
	srv := newChatOn(k, impl, ChatConfig{Limits: Limits{HighWater: 64 << 10, MaxPending: maxPending}}, listenSmall(k), names...)
	alice := login(k, srv, "alice")
	for _, name := range names[1:] {
		loginSmall(k, srv.Addr, name)
	}
	barrier(k, alice)
	base := liveHeap()

	// Each slow client is sent n frames: more than the kernel holds, less
	// than MaxPending, so it stays connected with most of it in the server.
	n := (maxPending - size) / (size + wire.HeaderSize)
	for i := range n {
		alice.SendFrame(wire.Frame{Type: wire.Broadcast, Sender: "alice", Payload: make([]byte, size-i%7)})
	}
	barrier(k, alice) // every broadcast has been queued for every slow client
	live := liveHeap() - base
	sent := n * (size + wire.HeaderSize)
	// + 64 KiB per client of bookkeeping, and the loop's pool of output
	// buffers (4 MiB).
	bound := clients*(maxPending+64<<10) + 4<<20
	k.Logf("%d slow clients, each sent %d KiB (MaxPending %d KiB): the server's live heap grew by %d KiB, "+
		"%d KiB per client", clients, sent>>10, maxPending>>10, live>>10, live/clients>>10)
	if live > bound {
		k.Fatalf("%d clients that do not read were each sent %d KiB (less than MaxPending, %d KiB; the kernel holds "+
			"at most %d KiB of it): the server's live heap grew by %d KiB, %d KiB per client, over the bound of "+
			"MaxPending per client\nhint: after a partial write, c.out = c.out[n:] keeps the sent bytes in front "+
			"of the buffer, and append grows it past what is pending: reuse the front (move the unsent bytes "+
			"there) before growing, and never grow a buffer past MaxPending (the given room does both)",
			clients, sent>>10, maxPending>>10, smallKernel>>10, live>>10, live/clients>>10)
	}
}

// liveHeap is the bytes of live heap objects, after a full collection.
func liveHeap() int {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int(m.HeapAlloc)
}

// checkIdleHoldsNoBuffer: once a frame that arrived in pieces is complete
// and handled, the connection gives its input buffer back. Many clients each
// send half of a 60 KB frame, then the rest; afterwards the server's live
// heap must be about what it was. A connection that keeps its input buffer
// (c.in = c.in[:0] instead of nil), or is given one of its own at accept,
// holds that memory for as long as it is connected, idle or not.
func checkIdleHoldsNoBuffer(k *testkit.T, impl Impl) {
	k.Helper()
	const clients = 100
	const size = 60000
	names := []string{"bob"}
	for i := range clients {
		names = append(names, fmt.Sprintf("user%d", i))
	}
	srv := newChat(k, impl, Limits{}, names...)
	bob := login(k, srv, "bob")
	barrier(k, bob)
	base := liveHeap() // before the clients connect: what they cost idle counts too
	var conns []*testkit.Conn
	for _, name := range names[1:] {
		conns = append(conns, login(k, srv, name))
	}
	barrier(k, bob)
	frames := make([][]byte, clients)
	for i, c := range conns {
		frames[i] = testkit.Encode(wire.Frame{Type: wire.PrivateMsg, Sender: names[i+1], Target: "nobody", Payload: make([]byte, size)})
		c.Write(frames[i][:size/2], "the first half of a private message to nobody")
	}
	barrier(k, bob) // every first half has been read, and kept
	for i, c := range conns {
		c.Write(frames[i][size/2:], "the rest of the private message")
		c.ExpectFrame(wire.Frame{Type: wire.PrivateMsg, Sender: wire.ServerName, Target: names[i+1],
			Payload: []byte("User not online.")})
	}
	frames = nil
	live := liveHeap() - base
	const bound = clients*(8<<10) + 1<<20 // the clients' own buffers (4 KiB each) are in the test process too
	k.Logf("%d clients, each idle again after a %d-byte frame sent in two halves: the live heap grew by %d KiB",
		clients, size, live>>10)
	if live > bound {
		k.Fatalf("%d clients each sent a %d-byte frame in two halves, got the answer, and are idle: the server's live "+
			"heap grew by %d KiB, %d bytes per idle connection; want next to nothing\nhint: when the handler has "+
			"consumed everything, set c.in = nil (not c.in[:0], which keeps the buffer): an idle connection holds "+
			"no buffer", clients, size, live>>10, live/clients)
	}
}
