package stocktest

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
	"serverlab/tools/given/stockfile"
)

// Tree checks exercise 4.1: the stock tree. Insert builds an unbalanced binary
// search tree in insertion order, Lookup finds by ID, PreOrder lists node,
// left, right; Load reads stock.txt in file order and reports a malformed line
// by number; writing the pre-order listing and loading it again rebuilds the
// same shape; Buy and Sell change counts and refuse what they cannot do.
func Tree(t *testing.T, impl Impl) {
	k := testkit.New(t, "4.1")
	checkInsert(k, impl)
	checkLoad(k, impl)
	checkMalformed(k, impl)
	checkRoundTrip(k, impl)
	checkTrades(k, impl)
}

func treeErr(k *testkit.T, what string, err error) {
	k.Helper()
	if errors.Is(err, lab.ErrNotImplemented) {
		k.Fatalf("%s: not implemented yet: %v", what, err)
	}
}

func describeIDs(stocks []stockfile.Stock) string {
	ids := make([]string, len(stocks))
	for i, s := range stocks {
		ids[i] = fmt.Sprint(s.ID)
	}
	return strings.Join(ids, " ")
}

func comparePreOrder(k *testkit.T, what string, got, want []stockfile.Stock) {
	k.Helper()
	if !slices.Equal(got, want) {
		k.Fatalf("%s: PreOrder is wrong\n  want ids: %s\n   got ids: %s\n  want: %v\n   got: %v\n"+
			"(pre-order = the node, then its left subtree, then its right subtree, of the unbalanced tree the "+
			"insertions build)", what, describeIDs(want), describeIDs(got), want, got)
	}
}

// checkInsert inserts a fixed and a shuffled sequence and compares the shape
// (through the pre-order listing) with the suite's own tree.
func checkInsert(k *testkit.T, impl Impl) {
	k.Helper()
	fixed := []int{50, 30, 70, 20, 40, 60, 80, 35, 45, 65}
	shuffled := k.Rand().Perm(200) // drawn afresh each run; the reference is the suite's own tree
	for _, ids := range [][]int{fixed, shuffled, {1, 2, 3, 4, 5}} {
		tree := impl.NewTree(nil)
		var stocks []stockfile.Stock
		for i, id := range ids {
			s := stockfile.Stock{ID: id, Count: i, Price: 1000 + id}
			if err := tree.Insert(s); err != nil {
				treeErr(k, "Insert", err)
				k.Fatalf("Insert(%v) into a tree without id %d: %v", s, id, err)
			}
			stocks = append(stocks, s)
		}
		what := fmt.Sprintf("after inserting ids %v", ids[:min(len(ids), 12)])
		comparePreOrder(k, what, tree.PreOrder(), preOrder(stocks))
		for _, s := range stocks {
			if got, ok := tree.Lookup(s.ID); !ok || got != s {
				k.Fatalf("%s: Lookup(%d) = %v, %v; want %v, true", what, s.ID, got, ok, s)
			}
		}
		for _, id := range []int{-1, 1000, 55} {
			if !slices.Contains(ids, id) {
				if got, ok := tree.Lookup(id); ok {
					k.Fatalf("%s: Lookup(%d) = %v, true; want false (never inserted)", what, id, got)
				}
			}
		}
		dup := stockfile.Stock{ID: ids[len(ids)/2], Count: 999, Price: 999}
		if err := tree.Insert(dup); err == nil {
			k.Fatalf("%s: Insert(%v) of an id already in the tree: want an error, got nil", what, dup)
		}
		comparePreOrder(k, what+" and a refused duplicate", tree.PreOrder(), preOrder(stocks))
	}
}

// checkLoad loads a file and checks that its lines were inserted in file order.
func checkLoad(k *testkit.T, impl Impl) {
	k.Helper()
	path := writeStocks(k, market+"\n7 1 1\n") // a blank line is allowed
	tree, err := impl.LoadTree(path)
	if err != nil {
		treeErr(k, "Load", err)
		k.Fatalf("Load(%s) of %q: %v", path, market+"\n7 1 1\n", err)
	}
	want := preOrder(parseStocks(k, market+"7 1 1\n"))
	comparePreOrder(k, "after Load of "+fmt.Sprintf("%q", market+"\n7 1 1\n"), tree.PreOrder(), want)
}

// checkMalformed: a file Load cannot use is an error naming its line.
func checkMalformed(k *testkit.T, impl Impl) {
	k.Helper()
	cases := []struct{ text, why string }{
		{"1 2 3\n2 3\n", "two fields"},
		{"1 2 3\n2 3 4\n3 x 5\n", "a count that is not a number"},
		{"1 2 3\n2 -3 4\n", "a negative count"},
		{"1 2 3\n2 3 4 5\n", "four fields"},
		{"1 2 3\n2 3 4\n1 9 9\n", "an id seen before"},
	}
	for _, c := range cases {
		path := writeStocks(k, c.text)
		lines := strings.Count(c.text, "\n")
		tree, err := impl.LoadTree(path)
		treeErr(k, "Load", err)
		if err == nil {
			k.Fatalf("Load of %q (%s on line %d): want an error, got a tree listing %v",
				c.text, c.why, lines, tree.PreOrder())
		}
		if want := fmt.Sprintf("line %d", lines); !strings.Contains(err.Error(), want) {
			k.Fatalf("Load of %q (%s): the error must name the line (%q)\n   got: %v", c.text, c.why, want, err)
		}
	}
	if _, err := impl.LoadTree(filepath.Join(k.TempDir(), "missing.txt")); err == nil {
		k.Fatalf("Load of a file that does not exist: want an error, got nil")
	}
}

// checkRoundTrip writes a tree's pre-order listing and loads it back: the
// same shape must come out. A sorted (in-order) file would build a list.
func checkRoundTrip(k *testkit.T, impl Impl) {
	k.Helper()
	ids := k.Rand().Perm(100)
	var text strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&text, "%d %d %d\n", id, id%7, id*3)
	}
	path := writeStocks(k, text.String())
	first, err := impl.LoadTree(path)
	if err != nil {
		treeErr(k, "Load", err)
		k.Fatalf("Load: %v", err)
	}
	listing := first.PreOrder()
	if err := testkit.WriteFile(path, stockfile.Format(listing), 0o644); err != nil {
		k.Fatalf("writing the pre-order listing back: %v", err)
	}
	second, err := impl.LoadTree(path)
	if err != nil {
		b, _ := testkit.ReadFile(path)
		k.Fatalf("Load of the pre-order listing %q: %v", b, err)
	}
	comparePreOrder(k, "after writing the pre-order listing and loading it again", second.PreOrder(), listing)
}

// checkTrades runs Buy and Sell one at a time.
func checkTrades(k *testkit.T, impl Impl) {
	k.Helper()
	tree, err := impl.LoadTree(writeStocks(k, market))
	if err != nil {
		k.Fatalf("Load: %v", err)
	}
	m := newModel(parseStocks(k, market))
	steps := []struct {
		op, id, n int // op 0 = Buy, 1 = Sell
		ok        bool
	}{
		{0, 5, 4, true}, {0, 5, 6, true}, {0, 5, 1, false}, {1, 5, 2, true},
		{0, 8, 1, false}, {1, 8, 3, true}, {0, 8, 3, true},
		{0, 2, 1, false}, {1, 2, 1, false}, {0, 1, 7, true},
		// A count holds at most the original's C int: a sell past it fails.
		{1, 4, stockfile.MaxValue, false}, {1, 4, stockfile.MaxValue - 1, true}, {1, 4, 1, false},
		{0, 4, stockfile.MaxValue, true}, {1, 4, 1, true},
	}
	for _, s := range steps {
		name, call := "Buy", tree.Buy
		if s.op == 1 {
			name, call = "Sell", tree.Sell
		}
		err := call(s.id, s.n)
		treeErr(k, name, err)
		if (err == nil) != s.ok {
			before := m.order[m.index[s.id]]
			k.Fatalf("%s(%d, %d) with the tree at %v (stock %d: %v): want ok=%v, got error %v\n"+
				"(a count holds at most %d, the original's C int: a sell past it is an error)",
				name, s.id, s.n, m.order, s.id, before, s.ok, err, stockfile.MaxValue)
		}
		if s.ok {
			line := "buy"
			if s.op == 1 {
				line = "sell"
			}
			m.apply(mustParse(fmt.Sprintf("%s %d %d", line, s.id, s.n)))
		}
		comparePreOrder(k, fmt.Sprintf("after %s(%d, %d)", name, s.id, s.n), tree.PreOrder(), m.order)
	}
}
