package stock

import (
	"errors"
	"fmt"
	"sync"

	"serverlab/tools/given/stockfile"
)

// Errors of the tree's operations. The server turns them into the protocol's
// replies.
var (
	ErrDuplicate   = errors.New("stock already in the tree")
	ErrNoSuchStock = errors.New("no such stock")
	ErrNotEnough   = errors.New("not enough left")
	ErrOverflow    = errors.New("count would overflow")
)

// node is one stock. Its ID, price and children never change once the tree
// is loaded, so reading them needs no lock; count changes under mu.
type node struct {
	id, price   int
	left, right *node

	mu    sync.Locker // guards count: one per stock, so trades on different stocks never wait for each other
	count int
}

// Tree is a binary search tree of stocks keyed by ID. It is not balanced: its
// shape is fixed by the order of insertion, which is the order of stock.txt.
//
// Make one with NewTree or Load. Insert is for loading only and must not run
// concurrently with anything else. Once loaded, Lookup, AppendPreOrder, Buy
// and Sell are safe for concurrent use: the shape no longer changes and each
// count has its own lock.
type Tree struct {
	root    *node
	size    int
	newLock func() sync.Locker // makes each stock's lock
}

// NewTree returns an empty tree. newLock, if not nil, makes the lock of each
// stock inserted (default: a new sync.Mutex). Tests pass locks that can pause
// a goroutine right after it unlocks, to check that "enough left?" and the
// update happen in one critical section.
func NewTree(newLock func() sync.Locker) *Tree {
	if newLock == nil {
		newLock = func() sync.Locker { return new(sync.Mutex) }
	}
	return &Tree{newLock: newLock}
}

// Load reads the stock file at path and inserts its stocks in file order.
func Load(path string) (*Tree, error) { return load(path, nil) }

// load is Load with the stocks' locks made by newLock (see NewTree).
func load(path string, newLock func() sync.Locker) (*Tree, error) {
	stocks, err := stockfile.Read(path)
	if err != nil {
		return nil, err
	}
	t := NewTree(newLock)
	for _, s := range stocks {
		if err := t.Insert(s); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return t, nil
}

// Insert adds s as a new leaf: left of every node with a larger ID on its
// way down, right of every node with a smaller one. An ID already in the tree
// is ErrDuplicate.
func (t *Tree) Insert(s stockfile.Stock) error {
	link := &t.root
	for *link != nil {
		switch n := *link; {
		case s.ID < n.id:
			link = &n.left
		case s.ID > n.id:
			link = &n.right
		default:
			return fmt.Errorf("stock %d: %w", s.ID, ErrDuplicate)
		}
	}
	*link = &node{id: s.ID, price: s.Price, count: s.Count, mu: t.newLock()}
	t.size++
	return nil
}

// Len is the number of stocks.
func (t *Tree) Len() int { return t.size }

// find returns the node with id, or nil.
func (t *Tree) find(id int) *node {
	n := t.root
	for n != nil && n.id != id {
		if id < n.id {
			n = n.left
		} else {
			n = n.right
		}
	}
	return n
}

// Lookup returns the stock with id.
func (t *Tree) Lookup(id int) (stockfile.Stock, bool) {
	n := t.find(id)
	if n == nil {
		return stockfile.Stock{}, false
	}
	return n.stock(), true
}

// stock reads n's current values.
func (n *node) stock() stockfile.Stock {
	n.mu.Lock()
	defer n.mu.Unlock()
	return stockfile.Stock{ID: n.id, Count: n.count, Price: n.price}
}

// PreOrder lists the stocks in pre-order: a node, then its left subtree, then
// its right subtree.
func (t *Tree) PreOrder() []stockfile.Stock {
	return t.AppendPreOrder(make([]stockfile.Stock, 0, t.size))
}

// AppendPreOrder appends the stocks in pre-order to dst. Pre-order is the
// order to write the file in: inserting the lines back in that order puts
// every node under the same parent again, so a reload rebuilds the same tree
// (in-order would give sorted lines, and sorted insertions a linked list).
func (t *Tree) AppendPreOrder(dst []stockfile.Stock) []stockfile.Stock {
	return appendPreOrder(dst, t.root)
}

func appendPreOrder(dst []stockfile.Stock, n *node) []stockfile.Stock {
	if n == nil {
		return dst
	}
	dst = append(dst, n.stock())
	dst = appendPreOrder(dst, n.left)
	return appendPreOrder(dst, n.right)
}

// Buy takes n shares of stock id. The check "are there n left?" and the
// decrement happen under the stock's lock, in one critical section: checked
// outside it, two buyers could both see enough and both take it.
func (t *Tree) Buy(id, n int) error {
	s := t.find(id)
	if s == nil {
		return ErrNoSuchStock
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n > s.count {
		return ErrNotEnough
	}
	s.count -= n
	return nil
}

// MaxCount is the most shares a stock can hold: the original's C int, the
// largest number a request or the stock file may carry.
const MaxCount = stockfile.MaxValue

// Sell adds n shares to stock id (n ≥ 0; the request parser guarantees it).
// A sell that would pass MaxCount is ErrOverflow and changes nothing.
func (t *Tree) Sell(id, n int) error {
	s := t.find(id)
	if s == nil {
		return ErrNoSuchStock
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n > MaxCount-s.count {
		return ErrOverflow
	}
	s.count += n
	return nil
}
