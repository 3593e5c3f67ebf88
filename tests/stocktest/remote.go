package stocktest

import (
	"serverlab/tests/judge"
	"serverlab/tools/given/stockfile"
)

// The proxies of chapter 04's tree and lock, for a judge whose subject runs
// the student's code (tests/judge).
func init() {
	judge.Proxy(func(o *judge.Object) StockTree { return &treeProxy{o} })
	judge.Proxy(func(o *judge.Object) RWLocker { return &rwProxy{o} })
}

type treeProxy struct{ o *judge.Object }

func (t *treeProxy) Insert(s stockfile.Stock) (err error) {
	_ = t.o.Call("Insert", []any{s}, &err)
	return err
}

func (t *treeProxy) Lookup(id int) (s stockfile.Stock, ok bool) {
	_ = t.o.Call("Lookup", []any{id}, &s, &ok)
	return s, ok
}

func (t *treeProxy) PreOrder() (stocks []stockfile.Stock) {
	_ = t.o.Call("PreOrder", nil, &stocks)
	return stocks
}

func (t *treeProxy) Buy(id, n int) (err error) {
	_ = t.o.Call("Buy", []any{id, n}, &err)
	return err
}

func (t *treeProxy) Sell(id, n int) (err error) {
	_ = t.o.Call("Sell", []any{id, n}, &err)
	return err
}

type rwProxy struct{ o *judge.Object }

func (l *rwProxy) RLock()   { _ = l.o.Call("RLock", nil) }
func (l *rwProxy) RUnlock() { _ = l.o.Call("RUnlock", nil) }
func (l *rwProxy) Lock()    { _ = l.o.Call("Lock", nil) }
func (l *rwProxy) Unlock()  { _ = l.o.Call("Unlock", nil) }
