package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"serverlab/tools/given/wire"
	"serverlab/tools/internal/load"
)

// The register mode drives a chapter 01 discovery server: every request is a
// new connection carrying one REGISTRATION of a fresh name, answered OK.
// -stallers adds connections that never send anything, to show what one
// silent client costs an iterative server.
func init() {
	register(mode{
		name:    "register",
		summary: "chat v1 discovery server: one REGISTRATION per connection (-stallers: silent clients)",
		run:     runRegister,
	})
}

func runRegister(ctx context.Context, env *env, args []string) error {
	fs := newFlagSet(env, "register")
	common := addCommonFlags(fs, "127.0.0.1:5000")
	stallers := fs.Int("stallers", 0, "extra connections that connect and never send (reconnecting when dropped)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for range *stallers {
		wg.Go(func() { stall(ctx, common.addr) })
	}
	defer wg.Wait()
	defer stop() // runs before wg.Wait: stop the stallers, then wait for them

	run := rand.Uint32() // names unique across runs against the same users file
	newClient := func(ctx context.Context, id int) (load.Client, error) {
		return &registerClient{addr: common.addr, timeout: common.timeout, prefix: fmt.Sprintf("lg%x-%d-", run, id)}, nil
	}
	return common.run(ctx, env, "register", newClient)
}

// registerClient registers one new user per request.
type registerClient struct {
	addr    string
	timeout time.Duration
	prefix  string
	seq     int
}

func (c *registerClient) Do(ctx context.Context) error {
	c.seq++
	name := fmt.Sprintf("%s%d", c.prefix, c.seq)
	conn, err := load.Dial(ctx, "tcp", c.addr, c.timeout)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(c.timeout))
	req := wire.Frame{Type: wire.Registration, Sender: name, Payload: []byte("pw")}
	if err := wire.WriteFrame(conn, req); err != nil {
		return err
	}
	reply, err := wire.ReadFrame(conn)
	if err != nil {
		return err
	}
	if reply.Type != wire.Registration || reply.Target != name || string(reply.Payload) != "OK" {
		return fmt.Errorf("%w: registering %s: got %v", load.ErrBadReply, name, reply)
	}
	return nil
}

func (c *registerClient) Close() error { return nil }

// stall keeps one silent connection open to addr until ctx ends, opening a
// new one whenever the server drops it.
func stall(ctx context.Context, addr string) {
	for ctx.Err() == nil {
		conn, err := load.Dial(ctx, "tcp", addr, 5*time.Second)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond): // the server is down: don't spin
			}
			continue
		}
		// Dial closes conn when ctx ends, so this returns then at the latest.
		io.Copy(io.Discard, conn)
		conn.Close()
	}
}
