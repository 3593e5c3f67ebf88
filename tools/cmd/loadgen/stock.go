package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"time"

	"serverlab/tools/given/stockproto"
	"serverlab/tools/internal/load"
)

// The stock mode is the original stock server's benchmark (chapters 04 and
// 05): each client sends random queries, one at a time, and reads each reply
// as one 8192-byte record. -mix chooses the query types, as in the original's
// experiment on query types: random (show, buy or sell, equally likely),
// show (show only) or modify (buy or sell only). -queries splits a total over
// the clients, as the original's <total_query> did.
//
// It drives the original servers too. They do not send the write-up's reply
// texts: success replies are wrapped in ANSI colour codes
// ("\x1b[0m[show]\x1b[0;32msuccess\n\x1b[0m…") and a refused trade is
// "[buy] failed". With -replies any (the default) a reply is judged by what it
// means, in either form; -replies course accepts only the course's exact texts.
func init() {
	register(mode{
		name:    "stock",
		summary: "stock server (ch 04/05): random show / buy / sell, 8192-byte replies (-mix random|show|modify)",
		run:     runStock,
	})
}

func runStock(ctx context.Context, env *env, args []string) error {
	fs := newFlagSet(env, "stock")
	common := addCommonFlags(fs, "127.0.0.1:9000")
	queries := fs.Int("queries", 0, "total queries, split evenly over the clients (sets -requests)")
	mix := fs.String("mix", "random", "query types: random (show/buy/sell), show, or modify (buy/sell)")
	ids := fs.Int("ids", 10, "stock IDs to trade: 1..`n` (the original's stock.txt had 1..10)")
	most := fs.Int("max", 10, "shares per buy or sell: 1..`n`")
	seed := fs.Uint64("seed", 1, "random seed (client i uses seed+i)")
	replies := fs.String("replies", "any", "reply texts to accept: any (the course's or the original's, judged by meaning) or course (exact)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *queries > 0 {
		if common.clients < 1 || *queries < common.clients {
			return fmt.Errorf("-queries %d: need at least one per client (%d clients)", *queries, common.clients)
		}
		common.requests = *queries / common.clients
	}
	kinds, ok := stockMixes[*mix]
	if !ok {
		return fmt.Errorf("-mix %q: want random, show or modify", *mix)
	}
	fits, ok := stockReplyRules[*replies]
	if !ok {
		return fmt.Errorf("-replies %q: want any or course", *replies)
	}
	if *ids < 1 || *most < 1 {
		return fmt.Errorf("-ids and -max must be at least 1")
	}
	common.labels = append(common.labels, load.Label{Name: "mix", Value: *mix})
	newClient := func(ctx context.Context, id int) (load.Client, error) {
		conn, err := load.Dial(ctx, "tcp", common.addr, common.timeout)
		if err != nil {
			return nil, err
		}
		return &stockClient{
			conn: conn, timeout: common.timeout, kinds: kinds, ids: *ids, most: *most, fits: fits,
			rng:   rand.New(rand.NewPCG(*seed+uint64(id), 0x5eed)),
			reply: make([]byte, stockproto.RecordSize),
		}, nil
	}
	return common.run(ctx, env, "stock", newClient)
}

// stockMixes are the query types of each -mix.
var stockMixes = map[string][]stockproto.Cmd{
	"random": {stockproto.Show, stockproto.Buy, stockproto.Sell},
	"show":   {stockproto.Show},
	"modify": {stockproto.Buy, stockproto.Sell},
}

// stockClient is one connection to a stock server.
//
// Its Do is lean on purpose: the load generator shares the machine with the
// server, and every microsecond of CPU it spends per query is taken from the
// server it measures. So it reuses its buffers (no allocation per query),
// formats numbers with strconv rather than fmt, sends a request with one
// write, reads the reply with io.ReadFull into one reused record, and moves
// the connection's deadline only when it is getting close (see Do).
type stockClient struct {
	conn      net.Conn
	timeout   time.Duration
	deadline  time.Time // the connection's current deadline
	kinds     []stockproto.Cmd
	ids, most int
	fits      func(stockproto.Cmd, []byte) bool // the -replies rule
	rng       *rand.Rand
	req       []byte // reused: a load generator should not allocate per request
	reply     []byte
}

// Do sends one query and reads its 8192-byte reply, checking that the reply
// is one the query can get.
func (c *stockClient) Do(ctx context.Context) error {
	kind := c.kinds[c.rng.IntN(len(c.kinds))]
	c.req = c.appendRequest(c.req[:0], kind)
	if err := c.extendDeadline(); err != nil {
		return err
	}
	if _, err := c.conn.Write(c.req); err != nil {
		return err
	}
	if _, err := io.ReadFull(c.conn, c.reply); err != nil {
		return err
	}
	text, _, _ := bytes.Cut(c.reply, []byte{0})
	if !c.fits(kind, text) {
		return fmt.Errorf("%w: sent %q, got %q", load.ErrBadReply, c.req, text[:min(len(text), 80)])
	}
	return nil
}

// appendRequest appends a random request of the given kind to dst.
func (c *stockClient) appendRequest(dst []byte, kind stockproto.Cmd) []byte {
	switch kind {
	case stockproto.Show:
		return append(dst, "show\n"...)
	case stockproto.Buy:
		dst = append(dst, "buy "...)
	default:
		dst = append(dst, "sell "...)
	}
	dst = strconv.AppendInt(dst, int64(1+c.rng.IntN(c.ids)), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(1+c.rng.IntN(c.most)), 10)
	return append(dst, '\n')
}

// extendDeadline keeps at least one timeout ahead of every request without
// moving the deadline on every request (each move re-arms a runtime timer).
// The deadline is set two timeouts ahead, then left alone until less than one
// timeout remains, so each request is bounded by between one and two
// timeouts. (Measured: the client's CPU per query hardly changed, since two
// thirds of it is system calls; docs/bench-ch04.md.)
func (c *stockClient) extendDeadline() error {
	now := time.Now()
	if c.deadline.Sub(now) >= c.timeout {
		return nil
	}
	c.deadline = now.Add(2 * c.timeout)
	return c.conn.SetDeadline(c.deadline)
}

// stockReplyRules are the -replies rules.
var stockReplyRules = map[string]func(stockproto.Cmd, []byte) bool{
	"course": stockReplyFits,
	"any":    stockReplyMeans,
}

// stockReplyFits reports whether text is a reply kind can get, in the
// course's exact texts (the write-up's).
func stockReplyFits(kind stockproto.Cmd, text []byte) bool {
	switch kind {
	case stockproto.Show:
		return bytes.HasPrefix(text, []byte(stockproto.ShowOK))
	case stockproto.Buy:
		return string(text) == stockproto.BuyOK || string(text) == stockproto.NotEnough ||
			string(text) == stockproto.NoSuchStock
	default:
		return string(text) == stockproto.SellOK || string(text) == stockproto.NoSuchStock
	}
}

// Close says goodbye as the original's client did, then closes.
func (c *stockClient) Close() error {
	c.conn.SetWriteDeadline(time.Now().Add(c.timeout))
	c.conn.Write([]byte("exit\n"))
	return c.conn.Close()
}

// stockReplyMeans reports whether text is a reply kind can get, in the
// course's texts or the original's: the original's ANSI colour codes are
// dropped first, and its "[buy] failed" / "[sell] failed" is the refusal the
// write-up calls NO SUCH STOCK or NOT ENOUGH LEFT STOCK. A reply in the
// course's texts costs no allocation.
func stockReplyMeans(kind stockproto.Cmd, text []byte) bool {
	if stockReplyFits(kind, text) {
		return true
	}
	plain := stripANSI(text)
	if stockReplyFits(kind, plain) {
		return true
	}
	var verb string
	switch kind {
	case stockproto.Buy:
		verb = "[buy]"
	case stockproto.Sell:
		verb = "[sell]"
	default:
		return false
	}
	rest, ok := bytes.CutPrefix(plain, []byte(verb))
	if !ok {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return string(rest) == "success" || string(rest) == "failed"
}

// stripANSI returns text without its ANSI escape sequences (ESC '[', then
// parameters, then one final byte), as a terminal would show it.
func stripANSI(text []byte) []byte {
	if bytes.IndexByte(text, 0x1b) < 0 {
		return text
	}
	out := make([]byte, 0, len(text))
	for i := 0; i < len(text); i++ {
		if text[i] != 0x1b || i+1 >= len(text) || text[i+1] != '[' {
			out = append(out, text[i])
			continue
		}
		j := i + 2
		for j < len(text) && (text[j] >= '0' && text[j] <= '9' || text[j] == ';') {
			j++
		}
		i = j // skips the final byte too
	}
	return out
}
