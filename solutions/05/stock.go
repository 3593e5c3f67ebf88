//go:build linux

package evloop

import (
	"errors"
	"log/slog"
	"time"

	"serverlab/tools/given/stockfile"
	"serverlab/tools/given/stockproto"
)

// StockConfig configures the stock server.
type StockConfig struct {
	// StockPath is the stock file (default "stock.txt"); the server refuses to
	// start without it.
	StockPath string
	// SyncInterval is how often the tree is written back while clients are
	// connected (default 16s, as the original).
	SyncInterval time.Duration
	// OnSync, if set, is called after each write-back with its result, from
	// the loop's goroutine. Tests use it to wait for a sync instead of
	// sleeping.
	OnSync func(error)
	// Saver writes the file atomically; its Intercept lets tests inject a
	// failing write.
	Saver stockfile.Saver
	// Loop tunes the event loop.
	Loop Options
}

// StockServer is the stock server of docs/protocols.md §3 on an event loop.
type StockServer struct {
	*Loop
	h *stock
}

// NewStock loads the stock file and returns the stock server.
func NewStock(cfg StockConfig) (*StockServer, error) {
	if cfg.StockPath == "" {
		cfg.StockPath = "stock.txt"
	}
	if cfg.SyncInterval <= 0 {
		cfg.SyncInterval = 16 * time.Second
	}
	if cfg.Loop.Logger == nil {
		cfg.Loop.Logger = slog.Default()
	}
	stocks, err := stockfile.Read(cfg.StockPath)
	if err != nil {
		return nil, err
	}
	// A kill -9 during a write-back leaves its temporary file; nothing else
	// would ever remove it.
	if _, err := stockfile.CleanTemps(cfg.StockPath, cfg.Loop.Logger); err != nil {
		cfg.Loop.Logger.Warn("could not remove stale temporary stock files", "err", err)
	}
	h := &stock{cfg: cfg, log: cfg.Loop.Logger}
	for _, s := range stocks {
		h.tree.insert(s)
	}
	return &StockServer{Loop: New(h, cfg.Loop), h: h}, nil
}

// Close stops the loop (the last client's departure writes the tree back)
// and writes the tree back once more if that write failed.
func (s *StockServer) Close() error {
	err := s.Loop.Close()
	if serr := s.h.sync("closing"); err == nil {
		err = serr
	}
	return err
}

// stock is the stock server's Handler. Like chat, it belongs to the loop's
// goroutine: the tree needs neither chapter 04's reader-writer lock nor its
// per-stock locks.
type stock struct {
	cfg      StockConfig
	log      *slog.Logger
	tree     tree
	clients  int
	dirty    bool      // the tree changed since the last write-back
	nextSync time.Time // when the interval's next write-back is due

	out    []byte            // scratch: each reply record is built here
	stocks []stockfile.Stock // scratch for show
}

// errExit is how a handler says "the client asked to leave".
var errExit = errors.New("exit")

func (s *stock) Opened(c *Conn) {
	s.clients++
	s.log.Debug("connected", "remote", c.Remote())
}

// Closed writes the tree back when the last client has left.
func (s *stock) Closed(c *Conn, err error) {
	s.clients--
	s.log.Debug("connection closed", "remote", c.Remote(), "err", err)
	if s.clients == 0 {
		s.sync("the last client left")
	}
}

// Tick writes the tree back every SyncInterval while clients are connected.
// With no client connected it sets no timer at all: nothing can change, and
// the last client to leave has written the tree back.
func (s *stock) Tick(now time.Time) time.Time {
	switch {
	case s.clients == 0:
		s.nextSync = time.Time{}
	case s.nextSync.IsZero():
		s.nextSync = now.Add(s.cfg.SyncInterval)
	case !now.Before(s.nextSync):
		s.sync("interval")
		s.nextSync = now.Add(s.cfg.SyncInterval)
	}
	return s.nextSync
}

// Data answers every complete request line, in order: pipelined requests are
// all answered (the original answered only the first line of a read).
func (s *stock) Data(c *Conn, in []byte) (int, error) {
	return DrainLines(in, func(line []byte) bool {
		if s.serve(c, line) == errExit {
			c.CloseWhenFlushed()
			return false
		}
		return !c.Congested()
	})
}

// serve answers one request with one record.
func (s *stock) serve(c *Conn, line []byte) error {
	s.out = s.out[:0]
	req, err := stockproto.Parse(string(line))
	switch {
	case err != nil:
		s.out = stockproto.AppendRecord(s.out, stockproto.ReplyOf(err))
	case req.Cmd == stockproto.Exit:
		return errExit
	case req.Cmd == stockproto.Empty:
		s.out = stockproto.AppendRecord(s.out, stockproto.PleaseType)
	case req.Cmd == stockproto.Show:
		s.stocks = s.tree.appendPreOrder(s.stocks[:0], s.tree.root)
		s.out, _ = stockproto.AppendShow(s.out, s.stocks)
		s.out = stockproto.FinishRecord(s.out, 0)
	case req.Cmd == stockproto.Buy:
		s.out = stockproto.AppendRecord(s.out, s.trade(req, stockproto.BuyOK))
	case req.Cmd == stockproto.Sell:
		s.out = stockproto.AppendRecord(s.out, s.trade(req, stockproto.SellOK))
	}
	return c.Write(s.out)
}

// trade runs a buy or a sell and returns the reply text. The check "enough
// left?" and the update cannot be separated by another client: nothing else
// runs while the loop is here.
func (s *stock) trade(req stockproto.Request, ok string) string {
	n := s.tree.find(req.ID)
	switch {
	case n == nil:
		return stockproto.NoSuchStock
	case req.Cmd == stockproto.Buy && req.N > n.Count:
		return stockproto.NotEnough
	case req.Cmd == stockproto.Buy:
		n.Count -= req.N
	case req.N > stockproto.MaxArg-n.Count:
		return stockproto.InvalidArgument // the count would pass the original's C int
	default:
		n.Count += req.N
	}
	s.dirty = true
	return ok
}

// sync writes the tree back if it changed, and reports to Config.OnSync. It
// runs on the loop's goroutine and so blocks every client while the file is
// written and fsynced: the price of having one goroutine. A failed write
// leaves the old file and the tree dirty, so the next sync retries.
func (s *stock) sync(why string) error {
	if !s.dirty {
		return nil
	}
	s.stocks = s.tree.appendPreOrder(s.stocks[:0], s.tree.root)
	err := s.cfg.Saver.Save(s.cfg.StockPath, s.stocks)
	s.dirty = err != nil
	if err != nil {
		s.log.Error("writing the stock file back failed; the old file is intact", "why", why, "err", err)
	} else {
		s.log.Debug("stock file written back", "why", why, "stocks", len(s.stocks))
	}
	if s.cfg.OnSync != nil {
		s.cfg.OnSync(err)
	}
	return err
}

// tree is a binary search tree of stocks keyed by ID, shaped by the order of
// insertion (the file's order), as the original's. Only the loop touches it.
type tree struct {
	root *node
}

type node struct {
	stockfile.Stock
	left, right *node
}

// insert adds s as a leaf; stockfile.Read has already refused duplicate IDs.
func (t *tree) insert(s stockfile.Stock) {
	link := &t.root
	for *link != nil {
		if s.ID < (*link).ID {
			link = &(*link).left
		} else {
			link = &(*link).right
		}
	}
	*link = &node{Stock: s}
}

// find returns the node of stock id, or nil.
func (t *tree) find(id int) *node {
	n := t.root
	for n != nil && n.ID != id {
		if id < n.ID {
			n = n.left
		} else {
			n = n.right
		}
	}
	return n
}

// appendPreOrder appends the stocks under n in pre-order (a node, its left
// subtree, its right subtree): the order that, read back in file order,
// rebuilds the same tree.
func (t *tree) appendPreOrder(dst []stockfile.Stock, n *node) []stockfile.Stock {
	if n == nil {
		return dst
	}
	dst = append(dst, n.Stock)
	dst = t.appendPreOrder(dst, n.left)
	return t.appendPreOrder(dst, n.right)
}
