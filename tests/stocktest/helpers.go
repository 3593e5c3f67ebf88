package stocktest

import (
	"errors"
	"net"
	"path/filepath"
	"strings"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
	"serverlab/tools/given/stockfile"
	"serverlab/tools/given/stockproto"
)

// market is the stock file most checks start from. Its pre-order is
// 5 3 1 4 8 9, and stock 8 is sold out.
const market = "5 10 1000\n3 2 500\n8 0 300\n1 7 100\n4 1 50\n9 3 900\n"

// writeStocks writes text as stock.txt in a fresh folder and returns its path.
func writeStocks(k *testkit.T, text string) string {
	k.Helper()
	path := filepath.Join(k.TempDir(), "stock.txt")
	if err := testkit.WriteFile(path, []byte(text), 0o644); err != nil {
		k.Fatalf("writing %s: %v", path, err)
	}
	return path
}

// newServer builds a server on stocks (the text of stock.txt) and starts it.
func newServer(k *testkit.T, impl Impl, cfg Config, stocks string) (*testkit.Server, lab.Server, string) {
	k.Helper()
	return newServerOn(k, impl, cfg, stocks, nil)
}

// newServerOn is newServer on a listener of the check's own (nil: a fresh
// one on 127.0.0.1:0).
func newServerOn(k *testkit.T, impl Impl, cfg Config, stocks string, ln net.Listener) (*testkit.Server, lab.Server, string) {
	k.Helper()
	if cfg.StockPath == "" {
		cfg.StockPath = writeStocks(k, stocks)
	}
	if cfg.Logger == nil {
		cfg.Logger = testkit.Logger()
	}
	raw, err := impl.NewServer(cfg)
	if errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("building the server needs an earlier exercise: %v", err)
	}
	if err != nil {
		k.Fatalf("NewServer with stock file %q: %v", stocks, err)
	}
	if ln == nil {
		return k.Serve(raw), raw, cfg.StockPath
	}
	return k.ServeListener(raw, ln), raw, cfg.StockPath
}

// parseStocks parses the text of a stock file the suite wrote itself.
func parseStocks(k *testkit.T, text string) []stockfile.Stock {
	k.Helper()
	s, err := stockfile.Parse(strings.NewReader(text))
	if err != nil {
		k.Fatalf("the suite's own stock file does not parse: %v", err)
	}
	return s
}

// model is the suite's own picture of the market: the tree in insertion order
// (its shape) and the counts, updated as the suite trades.
type model struct {
	order []stockfile.Stock // pre-order, the order show lists and the file stores
	index map[int]int       // id → position in order
}

func newModel(stocks []stockfile.Stock) *model {
	m := &model{order: preOrder(stocks), index: map[int]int{}}
	for i, s := range m.order {
		m.index[s.ID] = i
	}
	return m
}

// apply performs req on the model and returns the reply text the server must
// send.
func (m *model) apply(req stockproto.Request) string {
	i, ok := m.index[req.ID]
	switch {
	case req.Cmd == stockproto.Show:
		text, _ := stockproto.AppendShow(nil, m.order)
		return string(text)
	case !ok:
		return stockproto.NoSuchStock
	case req.Cmd == stockproto.Buy && req.N > m.order[i].Count:
		return stockproto.NotEnough
	case req.Cmd == stockproto.Buy:
		m.order[i].Count -= req.N
		return stockproto.BuyOK
	case req.N > stockproto.MaxArg-m.order[i].Count:
		return stockproto.InvalidArgument // the count would pass the original's C int
	default:
		m.order[i].Count += req.N
		return stockproto.SellOK
	}
}

func (m *model) file() string { return string(stockfile.Format(m.order)) }

// preOrder inserts stocks, in order, into a plain binary search tree and
// lists it in pre-order: the suite's reference for the tree's shape.
func preOrder(stocks []stockfile.Stock) []stockfile.Stock {
	type node struct {
		s           stockfile.Stock
		left, right *node
	}
	var root *node
	for _, s := range stocks {
		link := &root
		for *link != nil {
			if s.ID < (*link).s.ID {
				link = &(*link).left
			} else {
				link = &(*link).right
			}
		}
		*link = &node{s: s}
	}
	var out []stockfile.Stock
	var walk func(*node)
	walk = func(n *node) {
		if n != nil {
			out = append(out, n.s)
			walk(n.left)
			walk(n.right)
		}
	}
	walk(root)
	return out
}

// readRecord reads one reply record (testkit's, which checks the padding)
// and returns its text.
func readRecord(c *testkit.Conn) (string, error) {
	text, _, err := c.TryReadRecord()
	return text, err
}

// readRecordN is readRecord that also says how many bytes of the record
// arrived: 0 at a clean end of stream, fewer than a record when it was cut.
func readRecordN(c *testkit.Conn) (string, int, error) { return c.TryReadRecord() }

// expectRecord reads one record and compares its text with want.
func expectRecord(k *testkit.T, c *testkit.Conn, want string) {
	k.Helper()
	c.ExpectRecord(want)
}

// exchange sends line and expects the reply record with text want.
func exchange(k *testkit.T, c *testkit.Conn, line, want string) {
	k.Helper()
	c.WriteLine(line)
	expectRecord(k, c, want)
}

// mustParse parses a request the suite itself builds.
func mustParse(line string) stockproto.Request {
	req, err := stockproto.Parse(line)
	if err != nil {
		panic("stocktest: bad request in the suite: " + line)
	}
	return req
}
