package stock

import (
	"errors"
	"fmt"
	"sync"

	"serverlab/tools/stockfile"
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
	// TODO(ex 4.1): walk down from t.root (left for a smaller ID, right for a
	// larger one) to the nil link where s belongs and put the new node there:
	// &node{id: s.ID, price: s.Price, count: s.Count, mu: t.newLock()}.
	// Return an error wrapping ErrDuplicate if you meet s.ID on the way;
	// count the node in t.size. Hint: walking with a pointer to the link
	// (link := &t.root; link = &n.left) avoids a special case for the root.
	// Checked by TestEx4_1_Tree.
	return notImplemented("4.1", "Tree.Insert")
}

// Len is the number of stocks.
func (t *Tree) Len() int { return t.size }

// find returns the node with id, or nil.
func (t *Tree) find(id int) *node {
	// TODO(ex 4.1): the binary search: from the root, go left or right until
	// the ID matches or the link is nil. Checked by TestEx4_1_Tree.
	return nil
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
	// TODO(ex 4.1): append n.stock() for the root, then everything in its
	// left subtree, then everything in its right subtree (a recursive helper
	// taking and returning dst is the simplest). Checked by TestEx4_1_Tree.
	return dst
}

// Buy takes n shares of stock id. The check "are there n left?" and the
// decrement happen under the stock's lock, in one critical section: checked
// outside it, two buyers could both see enough and both take it.
func (t *Tree) Buy(id, n int) error {
	// TODO(ex 4.1): find the stock (ErrNoSuchStock if absent); if n is more
	// than its count return ErrNotEnough, otherwise subtract n.
	// TODO(ex 4.4): do the check and the subtraction holding the stock's mu,
	// both in the same critical section. Checked by TestEx4_1_Tree and
	// TestEx4_4_Conservation.
	return notImplemented("4.1", "Tree.Buy")
}

// MaxCount is the most shares a stock can hold: the original's C int, the
// largest number a request or the stock file may carry.
const MaxCount = stockfile.MaxValue

// Sell adds n shares to stock id (n ≥ 0; the request parser guarantees it).
// A sell that would pass MaxCount is ErrOverflow and changes nothing.
func (t *Tree) Sell(id, n int) error {
	// TODO(ex 4.1): find the stock (ErrNoSuchStock if absent) and add n;
	// return ErrOverflow instead if the count would pass MaxCount.
	// TODO(ex 4.4): under the stock's mu. Checked by TestEx4_1_Tree and
	// TestEx4_4_Conservation.
	return notImplemented("4.1", "Tree.Sell")
}
