//go:build !judge

package stock_test

import (
	"sync"

	stock "serverlab/chapters/04"
	"serverlab/tests/stocktest"
	"serverlab/tools/given/lab"
)

// The chapter's Impl values: the code under test, in this process under
// go test, in the subject under tools/cmd/grade (see tests/judge).

// impl hands this chapter's package to the suite in tests/stocktest.
var impl = stocktest.Impl{
	NewServer: func(c stocktest.Config) (lab.Server, error) {
		cfg := stock.Config{
			StockPath:    c.StockPath,
			Workers:      c.Workers,
			SyncInterval: c.SyncInterval,
			OnSync:       c.OnSync,
			Saver:        c.Saver,
			Logger:       c.Logger,
			IdleTimeout:  c.IdleTimeout,
			WriteTimeout: c.WriteTimeout,
			CloseGrace:   c.CloseGrace,
			NewStockLock: c.NewStockLock,
			OnLockWait:   c.OnLockWait,
		}
		if c.TreeLock {
			cfg.Granularity = stock.TreeLock
		}
		return stock.New(cfg)
	},
	LoadTree: func(path string) (stocktest.StockTree, error) {
		t, err := stock.Load(path)
		if err != nil {
			return nil, err
		}
		return t, nil
	},
	NewTree: func(newLock func() sync.Locker) stocktest.StockTree {
		return stock.NewTree(newLock)
	},
	NewRWLock: func(onWait func(writer bool)) stocktest.RWLocker { return stock.NewRWLock(onWait) },
	Threaded:  true,
}
