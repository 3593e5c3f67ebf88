package stock_test

import (
	"sync"
	"testing"

	stock "serverlab/chapters/04"
	"serverlab/tests/stocktest"
	"serverlab/tests/testkit"
	"serverlab/tools/lab"
)

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

func TestMain(m *testing.M) { testkit.Main(m) }

func TestEx4_1_Tree(t *testing.T)         { stocktest.Tree(t, impl) }
func TestEx4_2_Commands(t *testing.T)     { stocktest.Commands(t, impl) }
func TestEx4_3_RWLock(t *testing.T)       { stocktest.RWLock(t, impl) }
func TestEx4_4_Conservation(t *testing.T) { stocktest.Conservation(t, impl) }
func TestEx4_5_WorkerPool(t *testing.T)   { stocktest.WorkerPool(t, impl) }
func TestEx4_6_Persistence(t *testing.T)  { stocktest.Persistence(t, impl) }
func TestEx4_7_Close(t *testing.T)        { stocktest.Close(t, impl) }

func BenchmarkRWLock(b *testing.B) { stocktest.BenchmarkRWLock(b, impl) }
func BenchmarkServer(b *testing.B) { stocktest.BenchmarkServer(b, impl) }
