package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"serverlab/tools/internal/load"
)

// The tcp-echo mode: each request writes a message and expects the same bytes
// back. It works against any echo server (line-based or not), and is the
// smallest complete example of a mode.
func init() {
	register(mode{
		name:    "tcp-echo",
		summary: "send a message over TCP, expect the same bytes back (any echo server)",
		run:     runEcho,
	})
}

func runEcho(ctx context.Context, env *env, args []string) error {
	fs := newFlagSet(env, "tcp-echo")
	common := addCommonFlags(fs, "127.0.0.1:7000")
	size := fs.Int("size", 64, "message size in `bytes`, newline included")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *size < 1 {
		return fmt.Errorf("-size %d: a message needs at least one byte", *size)
	}
	newClient := func(ctx context.Context, id int) (load.Client, error) {
		conn, err := load.Dial(ctx, "tcp", common.addr, common.timeout)
		if err != nil {
			return nil, err
		}
		return &echoClient{id: id, conn: conn, timeout: common.timeout, msg: make([]byte, *size), reply: make([]byte, *size)}, nil
	}
	return common.run(ctx, env, "tcp-echo", newClient)
}

// echoClient is one connection to an echo server.
type echoClient struct {
	id         int
	conn       net.Conn
	timeout    time.Duration
	seq        int
	msg, reply []byte // reused: a load generator should not allocate per request
	head       []byte
}

// Do sends a message naming the client and the request, so that a reply
// meant for another request or client is caught, and reads it back.
func (c *echoClient) Do(ctx context.Context) error {
	c.seq++
	c.fill()
	if err := c.conn.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		return err
	}
	if _, err := c.conn.Write(c.msg); err != nil {
		return err
	}
	if _, err := io.ReadFull(c.conn, c.reply); err != nil {
		return err
	}
	if !bytes.Equal(c.reply, c.msg) {
		return fmt.Errorf("%w: sent %q, got %q", load.ErrBadReply, c.msg, c.reply)
	}
	return nil
}

// fill writes "client 3 request 17 ....\n" into msg, cut or padded to its size.
func (c *echoClient) fill() {
	c.head = fmt.Appendf(c.head[:0], "client %d request %d ", c.id, c.seq)
	n := copy(c.msg, c.head)
	for i := n; i < len(c.msg); i++ {
		c.msg[i] = '.'
	}
	c.msg[len(c.msg)-1] = '\n'
}

func (c *echoClient) Close() error { return c.conn.Close() }
