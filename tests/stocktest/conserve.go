package stocktest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/given/stockfile"
	"serverlab/tools/given/stockproto"
)

// Conservation checks exercise 4.4: many clients buying and selling at once
// conserve stock exactly. No count ever goes below zero, every final count is
// initial − bought + sold, and when more shares are wanted than exist exactly
// the existing ones are sold: "enough left?" and the decrement are one atomic
// step. On the tree directly (where the chapter has one), a lock that stops a
// trade right after it unlocks makes a split check-then-update fail every
// time; then many goroutines, and many clients through the server, trade at
// once.
func Conservation(t *testing.T, impl Impl) {
	k := testkit.New(t, "4.4")
	if impl.NewTree != nil {
		checkAtomicTrades(k, impl)
	}
	if impl.LoadTree != nil {
		conserveTree(k, impl)
	}
	conserveServer(k, impl)
	checkTradeReplies(k, impl)
	if impl.Threaded {
		checkTreeLock(k, impl)
	}
}

// checkTradeReplies: one client's trades, each with the reply the model
// predicts (no such stock, not enough, exactly all), and a count at the edge
// of its range: shares are neither created nor lost by a sell past the
// original's C int.
func checkTradeReplies(k *testkit.T, impl Impl) {
	k.Helper()
	srv, _, _ := newServer(k, impl, Config{}, market)
	checkServerTrades(k, k.Dial(srv), newModel(parseStocks(k, market)))
}

// ledger counts what the suite's traders did, per stock.
type ledger struct {
	bought, sold [16]atomic.Int64
}

func (l *ledger) want(initial []stockfile.Stock) map[int]int {
	want := map[int]int{}
	for _, s := range initial {
		want[s.ID] = s.Count - int(l.bought[s.ID].Load()) + int(l.sold[s.ID].Load())
	}
	return want
}

const (
	tradeMarket   = "3 40 10\n1 40 20\n2 40 30\n4 40 40\n"
	scarceID      = 7
	scarceMarket  = "7 60 70\n"
	traders       = 8
	tradesPerTree = 400
)

func conserveTree(k *testkit.T, impl Impl) {
	k.Helper()
	initial := parseStocks(k, tradeMarket+scarceMarket)
	tree, err := impl.LoadTree(writeStocks(k, tradeMarket+scarceMarket))
	if err != nil {
		treeErr(k, "Load", err)
		k.Fatalf("Load: %v", err)
	}
	var l ledger
	var scarce atomic.Int64
	var wg sync.WaitGroup
	// A reader lists the tree while the traders trade: under -race, a count
	// read outside its stock's lock is a data race even when every number
	// comes out right.
	stop := make(chan struct{})
	listed := make(chan struct{})
	go func() {
		defer close(listed)
		for {
			select {
			case <-stop:
				return
			default:
				tree.PreOrder()
				tree.Lookup(scarceID)
			}
		}
	}()
	for g := range traders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 44))
			for i := range tradesPerTree {
				id, n := 1+rng.IntN(4), 1+rng.IntN(5)
				if rng.IntN(2) == 0 {
					if tree.Buy(id, n) == nil {
						l.bought[id].Add(int64(n))
					}
				} else if tree.Sell(id, n) == nil {
					l.sold[id].Add(int64(n))
				}
				if i%2 == 0 && tree.Buy(scarceID, 1) == nil {
					scarce.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-listed
	l.bought[scarceID].Store(scarce.Load())
	for id, want := range l.want(initial) {
		got, ok := tree.Lookup(id)
		if !ok || got.Count != want {
			k.Fatalf("the tree after %d goroutines traded %d times each: stock %d has count %d, want %d "+
				"(initial − bought + sold); lost updates mean the count is changed outside the stock's lock",
				traders, tradesPerTree, id, got.Count, want)
		}
	}
	if n := scarce.Load(); n != 60 {
		k.Fatalf("%d goroutines bought stock %d (60 shares) one share at a time, %d times in all: %d buys "+
			"succeeded, want exactly 60. Check \"enough left?\" under the same lock as the decrement",
			traders, scarceID, traders*tradesPerTree/2, n)
	}
}

// conserveServer does the same through the protocol: clients trade at once,
// and shows in between must never list a negative count.
func conserveServer(k *testkit.T, impl Impl) {
	k.Helper()
	initial := parseStocks(k, tradeMarket+scarceMarket)
	srv, _, _ := newServer(k, impl, Config{Workers: traders}, tradeMarket+scarceMarket)
	var l ledger
	var scarce atomic.Int64
	var wg sync.WaitGroup
	for g := range traders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := trader(k, srv, g, &l, &scarce); err != nil {
				k.Errorf("trader %d: %v", g, err)
			}
		}()
	}
	wg.Wait()
	if k.Failed() {
		k.FailNow()
	}
	l.bought[scarceID].Store(scarce.Load())
	want := l.want(initial)
	c := k.Dial(srv)
	c.WriteLine("show")
	text, err := readRecord(c)
	if err != nil {
		k.Fatalf("the final show: %v%s", err, c.Context())
	}
	got, err := parseShow(text)
	if err != nil {
		k.Fatalf("the final show: %v", err)
	}
	for id, w := range want {
		if got[id] != w {
			k.Fatalf("after %d clients traded at once, show lists stock %d with count %d, want %d "+
				"(initial − bought + sold, from the replies)\n  show: %q", traders, id, got[id], w, text)
		}
	}
	if n := scarce.Load(); n != 60 {
		k.Fatalf("%d clients bought stock %d (60 shares) one share at a time: %d buys succeeded, want exactly 60",
			traders, scarceID, n)
	}
}

// trader is one client of conserveServer: random trades, a show now and then,
// one share of the scarce stock every other request.
func trader(k *testkit.T, srv *testkit.Server, g int, l *ledger, scarce *atomic.Int64) error {
	c, err := k.TryDial(srv)
	if err != nil {
		return err
	}
	defer c.Close()
	rng := rand.New(rand.NewPCG(uint64(g), 45))
	for i := range 60 {
		var lines []string
		id, n := 1+rng.IntN(4), 1+rng.IntN(5)
		switch rng.IntN(5) {
		case 0:
			lines = append(lines, "show")
		case 1, 2:
			lines = append(lines, fmt.Sprintf("buy %d %d", id, n))
		default:
			lines = append(lines, fmt.Sprintf("sell %d %d", id, n))
		}
		if i%2 == 0 {
			lines = append(lines, fmt.Sprintf("buy %d 1", scarceID))
		}
		if err := c.TryWrite([]byte(strings.Join(lines, "\n")+"\n"), fmt.Sprintf("%q", lines)); err != nil {
			return err
		}
		for _, line := range lines {
			text, err := readRecord(c)
			if err != nil {
				return fmt.Errorf("after %q: %v", line, err)
			}
			if err := account(line, text, l, scarce); err != nil {
				return err
			}
		}
	}
	return nil
}

// account checks one reply and books a successful trade.
func account(line, text string, l *ledger, scarce *atomic.Int64) error {
	req := mustParse(line)
	switch {
	case req.Cmd == stockproto.Show:
		counts, err := parseShow(text)
		if err != nil {
			return fmt.Errorf("show: %v", err)
		}
		for id, n := range counts {
			if n < 0 {
				return fmt.Errorf("show lists stock %d with a negative count %d: %q", id, n, text)
			}
		}
	case text == stockproto.BuyOK && req.ID == scarceID:
		scarce.Add(1)
	case text == stockproto.BuyOK && req.Cmd == stockproto.Buy:
		l.bought[req.ID].Add(int64(req.N))
	case text == stockproto.SellOK && req.Cmd == stockproto.Sell:
		l.sold[req.ID].Add(int64(req.N))
	case text == stockproto.NotEnough && req.Cmd == stockproto.Buy:
	default:
		return fmt.Errorf("sent %q, got the reply %q", line, text)
	}
	return nil
}

// parseShow reads the counts out of a show reply.
func parseShow(text string) (map[int]int, error) {
	rest, ok := strings.CutPrefix(text, stockproto.ShowOK)
	if !ok {
		return nil, fmt.Errorf("want a reply starting %q, got %q", stockproto.ShowOK, text)
	}
	stocks, err := stockfile.Parse(strings.NewReader(rest))
	if err != nil {
		return nil, fmt.Errorf("listing %q: %v", rest, err)
	}
	counts := map[int]int{}
	for _, s := range stocks {
		counts[s.ID] = s.Count
	}
	return counts, nil
}
