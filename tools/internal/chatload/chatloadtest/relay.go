// Package chatloadtest has a minimal chat protocol v1 relay to test chat
// load clients (package chatload and its users) without a real server: it
// can split frames into small writes, or relay nothing.
package chatloadtest

import (
	"net"
	"sync"
	"testing"
	"time"

	"serverlab/tools/given/wire"
)

// StartRelay runs a minimal chat server until the test ends: it accepts
// every login and relays each broadcast to every other client in writes of
// chunk bytes, or relays nothing if chunk is 0.
func StartRelay(t testing.TB, chunk int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex // guards online and each conn's writes
		online []net.Conn
		wg     sync.WaitGroup
	)
	relay := func(from net.Conn, frame []byte) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range online {
			if c == from {
				continue
			}
			for b := frame; len(b) > 0; b = b[min(chunk, len(b)):] {
				c.SetWriteDeadline(time.Now().Add(5 * time.Second))
				if _, err := c.Write(b[:min(chunk, len(b))]); err != nil {
					break
				}
			}
		}
	}
	serve := func(c net.Conn) {
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		login, err := wire.ReadFrame(c)
		if err != nil || login.Type != wire.Login {
			return
		}
		mu.Lock()
		online = append(online, c)
		mu.Unlock()
		if wire.WriteFrame(c, wire.Frame{Type: wire.Login, Sender: wire.ServerName, Target: login.Sender, Payload: []byte("OK")}) != nil {
			return
		}
		for {
			f, err := wire.ReadFrame(c)
			if err != nil {
				return
			}
			if f.Type == wire.Broadcast && chunk > 0 {
				f.Target = wire.Everyone
				b, _ := wire.Encode(f)
				relay(c, b)
			}
		}
	}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range online {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}
